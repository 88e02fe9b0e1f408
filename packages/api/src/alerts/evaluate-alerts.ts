// Turns what happened into deliveries, once per control plane: a run locks the one alert_cursor row
// (FOR UPDATE SKIP LOCKED: another instance's run in progress means this one skips) and, in the same
// transaction, reads what happened since the cursor, writes one delivery per webhook and event kind
// (a list of nodes: 10,000 nodes drifting at once is one delivery per webhook), and advances the cursor.
//
// Where events come from, all set-based (a fixed number of statements per run, none per node):
// - enrolled, revoked, drifted, conflicted: the audit trail (`events`, written in the transaction of
//   the change itself: record-event.ts), read by id after the cursor; events naming many nodes (bulk
//   revoke, forget, a fleet-wide conflict) are expanded to their nodes in the same statement;
// - failing: nodes whose health (node-health.ts) is failing and whose report last changed in
//   (evaluated_at, now] (nodes.last_changed_at);
// - offline: nodes disconnected whose last seen + the webhook's N minutes fell in (evaluated_at, now],
//   one join of webhooks and nodes: no per-node state is kept, the window is the state.
import { sql } from "drizzle-orm";
import { alertDeliveries, nodes, type AlertEvent, type Tx, rowsOf } from "@mesh/db";
import type { Deps } from "../deps";
import { alertBody, type AlertNode } from "./alert-payload";
import { nodeHealth } from "../services/node-health";
import { shownName } from "../services/node-name";

/** Audit events read per run at most; the rest wait for the next. */
export const EVENTS_PER_RUN = 5_000;
/** How long a hole in the event ids may hold the cursor when the snapshot cannot show it is permanent. */
export const GAP_WAIT_MS = 60_000;

const AUDIT_ACTIONS: Record<string, AlertEvent> = {
  "node.enrol": "enrolled",
  "node.revoke": "revoked",
  "node.bulk-revoke": "revoked",
  "node.forget": "revoked",
  "node.drift": "drifted",
  "declaration.conflict": "conflicted",
  // A staged rollout halted itself (rollouts/advance.ts): its failed nodes, each with the rollout and the reason.
  "rollout.halt": "rollout-halted",
};

/** An enabled webhook watching an event judged on a time window rather than on the audit trail. */
const WATCHES_WINDOW = sql.raw(`w.enabled and (w.events ? 'offline' or w.events ? 'failing')`);

/**
 * A webhook that starts watching a window (created or enabled): when no other enabled one watches any,
 * the evaluator has left the cursor's time alone while idle, so it is moved to now, in the webhook's own
 * transaction: the first window read for the new webhook starts when it was made, as it did when the
 * time moved every run. Nothing when another enabled webhook watches a window (the time is current).
 */
export async function restartAlertWindow(tx: Tx, webhookId: string): Promise<void> {
  await tx.execute(sql`
    update alert_cursor set evaluated_at = now()
    where id = 1 and evaluated_at < now()
      and exists (select 1 from webhooks w where w.id = ${webhookId} and ${WATCHES_WINDOW})
      and not exists (select 1 from webhooks w where w.id <> ${webhookId} and ${WATCHES_WINDOW})`);
}

interface Hook {
  id: string;
  events: AlertEvent[];
  offline_minutes: number | null;
}

/**
 * An event id not yet seen while later ones are: a transaction that took the id and has not committed,
 * or one that rolled back (a permanent hole). It is waited for until every transaction running when it
 * was first seen has ended (the snapshot's xmin passed that moment's xmax), or GAP_WAIT_MS at most.
 */
interface Gap {
  id: number;
  xmax: bigint;
  seenAt: number;
}

/**
 * `minIntervalMs`: a run that finds the last evaluation (by any instance) younger than this does nothing,
 * so N instances ticking every interval still evaluate about once per interval between them.
 */
export function createAlertEvaluator(deps: Pick<Deps, "db" | "log">, opts: { now?: () => number; minIntervalMs?: number } = {}) {
  const clock = opts.now ?? Date.now;
  let gap: Gap | null = null;

  function readable(ids: number[], from: number, xmin: bigint, xmax: bigint): number {
    // The last id of the run of ids after the cursor with no hole, or past holes known to be permanent.
    let last = from;
    for (const id of ids) {
      if (id === last + 1) {
        last = id;
        continue;
      }
      const hole = last + 1;
      if (gap?.id === hole && (xmin >= gap.xmax || clock() - gap.seenAt >= GAP_WAIT_MS)) {
        gap = null;
        last = id;
        continue;
      }
      if (gap?.id !== hole) gap = { id: hole, xmax, seenAt: clock() };
      break;
    }
    return last;
  }

  return async function evaluate(): Promise<{ deliveries: number } | null> {
    // Decided on a plain read first (no row lock, no transaction id): a run not due, or one with nothing
    // to read, writes nothing. Idle means no event after the cursor and no enabled webhook watching a
    // window (offline, failing: those are judged on (evaluated_at, now] and need the cursor's time moved).
    // The cursor's time then stays where it was: a webhook that starts watching a window restarts it
    // (restartAlertWindow), so an old window is never read for it.
    const [state] = rowsOf<{ young: boolean; events: boolean; windowed: boolean }>(
      await deps.db.execute(sql`
        select c.evaluated_at > now() - make_interval(secs => ${(opts.minIntervalMs ?? 0) / 1000}) as young,
               exists (select 1 from events e where e.id > c.event_id) as events,
               exists (select 1 from webhooks w where ${WATCHES_WINDOW}) as windowed
        from alert_cursor c where c.id = 1`),
    );
    if (!state) return null;
    if (opts.minIntervalMs && state.young) return null;
    if (!state.events && !state.windowed) return { deliveries: 0 };
    return deps.db.transaction(async (tx) => {
      const [cursor] = rowsOf<{ event_id: string | number; evaluated_at: string | Date; now: string | Date; xmin: string; xmax: string }>(
        await tx.execute(sql`
          select event_id, evaluated_at, now() as now,
                 pg_snapshot_xmin(pg_current_snapshot())::text as xmin, pg_snapshot_xmax(pg_current_snapshot())::text as xmax
          from alert_cursor where id = 1 for update skip locked`),
      );
      if (!cursor) return null;
      const from = Number(cursor.event_id);
      const since = new Date(cursor.evaluated_at);
      const now = new Date(cursor.now);
      if (opts.minIntervalMs && now.getTime() - since.getTime() < opts.minIntervalMs) return null;
      const hooks = rowsOf<Hook>(await tx.execute(sql`select id, events, offline_minutes from webhooks where enabled`));

      const ids = rowsOf<{ id: string | number }>(await tx.execute(sql`select id from events where id > ${from} order by id limit ${EVENTS_PER_RUN}`)).map(
        (r) => Number(r.id),
      );
      const upTo = readable(ids, from, BigInt(cursor.xmin), BigInt(cursor.xmax));
      let deliveries = 0;
      if (hooks.length > 0) {
        const happened = await whatHappened(tx, { from, upTo, since, now, wanted: new Set(hooks.flatMap((h) => h.events)) });
        const offline = hooks.some((h) => h.events.includes("offline")) ? await offlineNodes(tx, since, now) : new Map<string, AlertNode[]>();
        const rows: Array<typeof alertDeliveries.$inferInsert> = [];
        for (const hook of hooks) {
          for (const event of hook.events) {
            const nodes = event === "offline" ? (offline.get(hook.id) ?? []) : (happened.get(event) ?? []);
            if (nodes.length > 0) rows.push({ webhookId: hook.id, event, body: alertBody(event, now, nodes) });
          }
        }
        if (rows.length > 0) await tx.insert(alertDeliveries).values(rows);
        deliveries = rows.length;
      }
      await tx.execute(sql`update alert_cursor set event_id = ${upTo}, evaluated_at = ${now.toISOString()}::timestamptz where id = 1`);
      if (deliveries > 0) deps.log.info({ deliveries, events: upTo - from }, "alerts queued");
      return { deliveries };
    });
  };
}

/** The audit events of interest in (from, upTo], and failing reports in (since, now], as nodes per alert event. */
async function whatHappened(tx: Tx, w: { from: number; upTo: number; since: Date; now: Date; wanted: Set<AlertEvent> }): Promise<Map<AlertEvent, AlertNode[]>> {
  const out = new Map<AlertEvent, AlertNode[]>();
  const seen = new Set<string>();
  // One entry per node and event in a run (a node drifting twice in a window is listed once).
  const add = (event: AlertEvent, node: AlertNode) => {
    if (seen.has(`${event} ${node.id}`)) return;
    seen.add(`${event} ${node.id}`);
    const list = out.get(event) ?? [];
    list.push(node);
    out.set(event, list);
  };
  const actions = Object.entries(AUDIT_ACTIONS)
    .filter(([, e]) => w.wanted.has(e))
    .map(([a]) => a);
  if (w.upTo > w.from && actions.length > 0) {
    // One row per event and node it names, expanded in the statement: an event about one node names it
    // (node_id); a bulk revoke and a fleet-wide conflict name theirs in data.nodeIds (node_id null), and
    // a forget lists the retiring nodes it revoked in data.revoked (its node_id, when one, may be a node
    // long revoked or retired: not a revocation now).
    const audit = rowsOf<{ action: string; node_id: string; name: string | null; data: Record<string, unknown>; named: boolean; node_conflicts: unknown }>(
      await tx.execute(sql`
        select e.action, x.id as node_id, ${shownName} as name, e.data, x.named, ${nodes.conflicts} as node_conflicts
        from events e
        cross join lateral (
          select e.node_id as id, true as named
          where e.node_id is not null and e.action in ('node.enrol', 'node.revoke', 'node.drift', 'declaration.conflict')
          union all
          select v::uuid, false from jsonb_array_elements_text(case
            when e.action = 'node.forget' and jsonb_typeof(e.data -> 'revoked') = 'array' then e.data -> 'revoked'
            when e.action in ('node.bulk-revoke', 'declaration.conflict') and e.node_id is null and jsonb_typeof(e.data -> 'nodeIds') = 'array' then e.data -> 'nodeIds'
            when e.action = 'rollout.halt' and jsonb_typeof(e.data -> 'nodeIds') = 'array' then e.data -> 'nodeIds'
          end) v
        ) x
        left join ${nodes} on ${nodes.id} = x.id
        where e.id > ${w.from} and e.id <= ${w.upTo}
          and e.action in (${sql.join(
            actions.map((a) => sql`${a}`),
            sql`, `,
          )})
        order by e.id`),
    );
    for (const r of audit) {
      if (r.action === "node.enrol" && r.data?.pending) continue;
      const event = AUDIT_ACTIONS[r.action]!;
      // A fleet-wide conflict lists the distinct conflicts of all its nodes: each node's own are on its row.
      const detail =
        event === "drifted"
          ? { drift: r.data?.count, ids: r.data?.ids }
          : event === "conflicted"
            ? { conflicts: r.named ? r.data?.conflicts : r.node_conflicts }
            : event === "rollout-halted"
              ? { rollout: r.data?.id, role: r.data?.role, toVersion: r.data?.toVersion, wave: r.data?.wave, reason: r.data?.reason }
              : undefined;
      add(event, { id: r.node_id, name: r.name, ...(detail ? { detail } : {}) });
    }
  }
  if (w.wanted.has("failing")) {
    // Failing as the Fleet shows it (node-health.ts: refused its declaration, or errors or skipped
    // resources in the latest report of it), alerted when the node's report last changed in the window:
    // a node that turns failing, or fails differently, alerts once; its unchanged reports do not again.
    const failing = rowsOf<{ id: string; name: string; errors: number; skipped: number; rejected: number | null }>(
      await tx.execute(sql`
        select ${nodes.id} as id, ${shownName} as name, ${nodes.errorCount} as errors, ${nodes.skippedCount} as skipped, ${nodes.rejectedVersion} as rejected
        from ${nodes}
        where ${nodes.lastChangedAt} > ${w.since.toISOString()}::timestamptz and ${nodes.lastChangedAt} <= ${w.now.toISOString()}::timestamptz
          and ${nodeHealth} = 'failing'`),
    );
    for (const r of failing)
      add("failing", {
        id: r.id,
        name: r.name,
        detail: { errors: r.errors, skipped: r.skipped, ...(r.rejected !== null ? { rejectedVersion: r.rejected } : {}) },
      });
  }
  return out;
}

/** Per webhook watching "offline": the nodes whose disconnection crossed its N minutes in (since, now]. One statement. */
async function offlineNodes(tx: Tx, since: Date, now: Date): Promise<Map<string, AlertNode[]>> {
  const rows = rowsOf<{ webhook_id: string; id: string; name: string; last_seen_at: string | Date }>(
    await tx.execute(sql`
      select w.id as webhook_id, ${nodes.id} as id, ${shownName} as name, ${nodes.lastSeenAt} as last_seen_at
      from webhooks w join ${nodes}
        on ${nodes.state} = 'disconnected' and ${nodes.lastSeenAt} is not null
       and ${nodes.lastSeenAt} + make_interval(mins => w.offline_minutes) > ${since.toISOString()}::timestamptz
       and ${nodes.lastSeenAt} + make_interval(mins => w.offline_minutes) <= ${now.toISOString()}::timestamptz
      where w.enabled and w.offline_minutes is not null and w.events ? 'offline'`),
  );
  const out = new Map<string, AlertNode[]>();
  for (const r of rows) {
    const list = out.get(r.webhook_id) ?? [];
    list.push({ id: r.id, name: r.name, detail: { offlineSince: new Date(r.last_seen_at).toISOString() } });
    out.set(r.webhook_id, list);
  }
  return out;
}
