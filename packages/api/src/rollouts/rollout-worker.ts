// Runs rollouts in every control-plane instance, on a timer; only the instance holding the lease
// (lease.ts) advances them, so exactly one does at a time, and a restarted or replacement instance picks
// up where the rollouts' rows say they are (the state is all in Postgres: nothing to resume in memory).
// While no rollout is running a tick is one read (the partial index rollouts_active_idx) and writes
// nothing: the lease is taken or renewed only while there is a rollout to advance (issue 11, ≤ 1 write/s
// idle). A failed step is logged and tried again next tick; stopping waits for the tick in progress and
// gives the lease up.
import { randomUUID } from "node:crypto";
import type { Deps } from "../deps";
import { advanceRollout, runningRollouts } from "./advance";
import { releaseLease, takeLease } from "./lease";

export interface RolloutWorkerOptions {
  /** How often to tick (default 2 s). */
  intervalMs?: number;
  /** How long the lease lasts without renewal (default max(15 s, 3 ticks)). */
  leaseMs?: number;
  /** Names this instance in the lease (default a random id). */
  owner?: string;
}

/** What a tick found: no rollout running (nothing taken, nothing written), the lease held here, or held by another instance. */
export type RolloutTickResult = "idle" | "held" | "elsewhere";

/**
 * One tick: when some rollout is running, takes or renews the lease and, when held, advances every
 * running rollout. With none running it only reads: an idle control plane writes nothing for rollouts
 * (a lease left unrenewed expires; the next rollout's first tick takes it, whichever instance ticks).
 */
export async function rolloutTick(deps: Pick<Deps, "db" | "log" | "grants" | "now">, owner: string, leaseMs: number): Promise<RolloutTickResult> {
  const running = await runningRollouts(deps.db);
  if (running.length === 0) return "idle";
  if (!(await takeLease(deps.db, owner, leaseMs))) return "elsewhere";
  for (const id of running) {
    // One step per rollout per tick (a wave judged and, with no soak, the next one released): a wave just
    // released waits for its reports anyway.
    try {
      const step = await advanceRollout(deps, id);
      // What this instance did (not what it waited for): which instance judged or released a wave is in its log.
      if (step !== "waiting" && step !== "not-running") deps.log.info({ rollout: id, step, owner }, `rollout ${step}`);
    } catch (err) {
      deps.log.warn({ err, rollout: id }, "rollout step failed; trying again next tick");
    }
  }
  return "held";
}

export interface RolloutWorker {
  owner: string;
  stop(): Promise<void>;
}

export function startRolloutWorker(deps: Pick<Deps, "db" | "log" | "grants" | "now">, opts: RolloutWorkerOptions = {}): RolloutWorker {
  const intervalMs = opts.intervalMs ?? 2_000;
  const leaseMs = opts.leaseMs ?? Math.max(15_000, 3 * intervalMs);
  const owner = opts.owner ?? randomUUID();
  let stopped = false;
  let running: Promise<void> | null = null;
  let held = false;
  const tick = async () => {
    try {
      const result = await rolloutTick(deps, owner, leaseMs);
      // Idle: nothing held or renewed (the lease runs out); the next rollout's taking is worth its line again.
      if (result === "idle") return void (held = false);
      const holds = result === "held";
      // Taking the lease (for a rollout that started, or from an instance that died) and losing it are worth a line each.
      if (holds !== held)
        deps.log.info(
          { owner },
          holds ? "rollout lease taken: this instance runs staged rollouts" : "rollout lease lost: another instance runs staged rollouts",
        );
      held = holds;
    } catch (err) {
      deps.log.warn({ err }, "rollout tick failed; trying again next tick");
    }
  };
  const timer = setInterval(() => {
    // One tick at a time in an instance.
    if (stopped || running) return;
    running = tick().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    owner,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await releaseLease(deps.db, owner).catch(() => {});
    },
  };
}
