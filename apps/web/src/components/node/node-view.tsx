"use client";
// One node: state and timeline, labels, profile, inventory, the declaration with
// a status per resource, owned resources with digests and drift. Polled every 2 s,
// so a retirement is followed live until `retired`.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { isLive, resourceSubject, type Inventory, type Resource } from "@mesh/protocol";
import { useTRPC } from "../trpc";
import { StateBadge } from "../state-badge";
import { RelativeTime } from "../relative-time";
import { Section } from "../section";
import { ColumnHeads } from "../column-heads";
import { ErrorState } from "../states";
import { NodeActions } from "./node-actions";
import { LabelsEditor } from "./labels-editor";
import { InventoryPanel } from "./inventory-panel";
import { ReplacementClaims } from "./replacement-claims";
import { NodeRename } from "./node-rename";
import { HealthBadge } from "../health-badge";
import { ReconcileNowButton } from "./reconcile-now-button";
import { ForgetNode } from "./forget-node";
import { DriftDecisions } from "./drift-decisions";
import { NodeRoles, roleHref } from "./node-roles";
import { ProfileList } from "./profile-list";
import { RolloutNodePins } from "../roles/rollout-node-pins";

export type NodeDetail = inferRouterOutputs<AppRouter>["node"]["get"];

const STATUS_STYLE: Record<string, string> = {
  applied: "bg-emerald-100 text-emerald-800",
  drifted: "bg-amber-100 text-amber-900",
  failed: "bg-rose-100 text-rose-800",
  pending: "bg-sky-100 text-sky-800",
  skipped: "bg-slate-100 text-slate-700",
};
const STATE_EVENTS = /^node\.(enrol|retire|retired|revoke|re-enrol|replacement|connected|disconnected|state)/;

/**
 * The node's events and its declaration versions, newest first. A fleet compile records one
 * event for every node it changed, so a version is shown from the node's own history
 * (declarations), and a single-node compile's event is not shown twice.
 */
function timelineOf(node: NodeDetail) {
  const events = node.events
    .filter((e) => e.action !== "declaration.compile")
    .map((e) => ({
      key: `e${e.id}`,
      at: new Date(e.at),
      label: e.action,
      detail: `by ${e.actor.startsWith("node:") ? "the host" : e.actor}`,
      strong: STATE_EVENTS.test(e.action),
      refused: e.result !== "ok",
    }));
  const versions = node.declarations.map((d) => ({
    key: `d${d.version}`,
    at: new Date(d.createdAt),
    label: `declaration v${d.version}`,
    detail: d.final ? `final (${d.final})` : d.roles.length > 0 ? `from ${d.roles.join(", ")}` : "empty",
    strong: false,
    refused: false,
  }));
  return [...events, ...versions].sort((a, b) => b.at.getTime() - a.at.getTime()).slice(0, 50);
}

export function NodeView({ initial, canEdit }: { initial: NodeDetail; canEdit: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.node.get.queryOptions({ id: initial.id }, { refetchInterval: 2000, initialData: initial }));
  const node = q.data;
  const resources = (node.declaration?.resources ?? []) as Resource[];
  const statusOf = new Map(node.resourceStates.map((s) => [s.id, s]));
  const retiring = node.state === "retiring";
  const timeline = timelineOf(node);

  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link href="/" className="text-slate-700 hover:underline">
          ← Fleet
        </Link>
      </p>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-2xl font-semibold" data-testid="node-name">
            {node.name}
          </h1>
          <span className="font-mono text-xs text-slate-600" title={node.id}>
            {node.id.slice(0, 8)}
          </span>
          {node.displayName && <span className="text-sm text-slate-700">hostname {node.hostname}</span>}
          <HealthBadge health={node.health} />
          <StateBadge state={node.state} />
          {canEdit && <NodeRename nodeId={node.id} name={node.name} hostname={node.hostname} displayName={node.displayName} />}
          <span className="text-sm text-slate-700">
            declared v{node.declaredVersion}, applied v{node.appliedVersion}
            {node.rejectedVersion !== null && node.rejectedVersion >= node.declaredVersion ? ` (v${node.rejectedVersion} refused)` : ""} · last seen{" "}
            <RelativeTime at={node.lastSeenAt} /> ·{" "}
            <span data-testid="last-checked">
              last checked <RelativeTime at={node.lastCheckedAt} />
            </span>{" "}
            ·{" "}
            <span data-testid="last-changed">
              last changed <RelativeTime at={node.lastChangedAt} />
            </span>
            {node.hostVersion ? ` · mesh-host ${node.hostVersion}` : ""}
          </span>
        </div>
        {canEdit && (
          <div className="flex flex-wrap items-start gap-2">
            <ReconcileNowButton node={node} />
            <NodeActions node={node} />
            <ForgetNode node={node} />
          </div>
        )}
      </div>
      {q.isError && <ErrorState error={q.error} title="Live updates paused" />}
      <ReplacementClaims node={node} canEdit={canEdit} />
      {retiring && (
        <div role="status" data-testid="retire-progress" className="rounded-md border border-sky-200 bg-sky-50 p-3 text-sm text-sky-900">
          Retiring: waiting for the host to apply the final declaration v{node.declaredVersion} and remove what it owns ({node.owned.length} resource
          {node.owned.length === 1 ? "" : "s"} left, host at v{node.appliedVersion}).
        </div>
      )}
      {node.replacesNodeId && (node.state === "retired" || node.state === "revoked") && (
        <p role="status" data-testid="claim-outcome" className="rounded-md border border-slate-200 bg-white p-3 text-sm text-slate-800">
          This machine claimed to be node{" "}
          <Link href={`/nodes/${node.replacesNodeId}`} className="font-medium underline">
            {node.name}
          </Link>
          .{" "}
          {node.state === "retired"
            ? "An admin approved it: that node holds its key now, and this record ends here."
            : "An admin rejected the claim: its key is refused everywhere."}
        </p>
      )}
      {node.state === "retired" && !node.replacesNodeId && (
        <p role="status" className="rounded-md border border-slate-200 bg-white p-3 text-sm text-slate-800">
          Retired <RelativeTime at={node.retiredAt} />: the host removed what it owned and left the mesh; its credential and grants are revoked.
        </p>
      )}
      {node.state === "revoked" && !node.replacesNodeId && (
        <p role="status" className="rounded-md border border-rose-200 bg-rose-50 p-3 text-sm text-rose-900">
          Revoked <RelativeTime at={node.revokedAt} />: its credential and grants are refused everywhere. The machine may still run its last declaration.
        </p>
      )}
      {node.storeLost && (
        <p role="alert" data-testid="store-lost" className="rounded-md border border-rose-200 bg-rose-50 p-3 text-sm text-rose-900">
          This host lost its local store: it no longer remembers what it created before, so it cannot remove it. The last owned set it reported is kept below;
          remove those resources by hand or declare them again to take them back.
        </p>
      )}
      {node.conflicts.length > 0 && (
        <div role="alert" data-testid="conflicts" className="rounded-md border border-amber-200 bg-amber-50 p-3 text-sm text-amber-900">
          <p className="font-medium">Nothing new is pushed to this node: its roles conflict.</p>
          <ul className="mt-1 list-disc pl-5">
            {node.conflicts.map((c) => (
              <li key={c.key}>
                <span className="font-mono">{c.key}</span> is declared differently by roles <strong>{c.roles[0]}</strong> and <strong>{c.roles[1]}</strong>
              </li>
            ))}
          </ul>
        </div>
      )}

      <NodeRoles roles={node.roles} />
      <RolloutNodePins pins={node.rolloutPins} />

      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
        <Section title={`Declaration v${node.declaration?.version ?? 0}`} className="lg:col-span-2">
          {resources.length === 0 ? (
            <p className="text-sm text-slate-600">Nothing declared: no role matches this node.</p>
          ) : (
            <div
              className="overflow-x-auto focus-visible:ring-2 focus-visible:ring-sky-500"
              tabIndex={0}
              role="region"
              aria-label="Declared resources (scrolls sideways)"
            >
              <table className="min-w-full text-sm">
                <ColumnHeads names={["Resource", "Subject", "Role", "Status", "Detail"]} cell="px-2 py-1" />
                <tbody className="divide-y divide-slate-100">
                  {resources.map((r) => {
                    const s = statusOf.get(r.id);
                    const role = node.resourceRoles[r.id];
                    return (
                      <tr key={r.id} data-testid="declared-resource">
                        <td className="px-2 py-1 font-mono">
                          {r.id} <span className="text-slate-600">{r.type}</span>
                        </td>
                        <td className="px-2 py-1 font-mono">{resourceSubject(r).replace(/^\w+:/, "")}</td>
                        <td className="px-2 py-1" data-testid="resource-role">
                          {role ? (
                            <Link href={roleHref(role)} className="underline">
                              {role}
                            </Link>
                          ) : (
                            <span className="text-slate-600" title="No role that matches this node declares it now">
                              none now
                            </span>
                          )}
                        </td>
                        <td className="px-2 py-1">
                          <span
                            data-testid="resource-status"
                            className={`rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_STYLE[s?.status ?? "pending"]}`}
                          >
                            {s?.status ?? "pending"}
                          </span>
                        </td>
                        <td className="px-2 py-1 text-slate-700">
                          {s?.detail ?? (s?.digest ? <span className="font-mono text-xs">{s.digest.slice(0, 12)}</span> : "")}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          {node.errors
            .filter((e) => !e.id)
            .map((e, i) => (
              <p key={i} role="alert" className="mt-2 text-sm text-rose-700">
                The declaration as a whole failed: {e.message}
              </p>
            ))}
        </Section>

        <Section title={`Drift (${node.drift.length})`}>
          {node.drift.length === 0 ? (
            <p className="text-sm text-slate-600">No drift in the last report.</p>
          ) : (
            <ul data-testid="drift" className="space-y-2 text-sm">
              {node.drift.map((d) => (
                <li key={d.id}>
                  <p>
                    <span className="font-mono">{d.id}</span>: {d.description}{" "}
                    {d.corrected ? <span className="text-emerald-800">(corrected)</span> : <span className="font-medium text-amber-900">(not corrected)</span>}
                  </p>
                  <p className="font-mono text-xs text-slate-700">
                    declared {d.declared.slice(0, 12)} · observed {d.observed ? d.observed.slice(0, 12) : "missing"}
                  </p>
                  {canEdit && !d.corrected && resources.find((r) => r.id === d.id)?.onDrift === "report" && (
                    <DriftDecisions nodeId={node.id} resourceId={d.id} />
                  )}
                </li>
              ))}
            </ul>
          )}
        </Section>

        <Section title={`Owned (${node.owned.length})`}>
          {node.owned.length === 0 ? (
            <p className="text-sm text-slate-600">The host owns nothing{node.reportReceivedAt ? "" : " yet"}.</p>
          ) : (
            <ul data-testid="owned" className="space-y-1 text-sm">
              {node.owned.map((o) => (
                <li key={o.id} className="flex justify-between gap-2 font-mono">
                  <span>
                    {o.id} <span className="text-slate-600">{o.type}</span>
                    {o.adopted ? <span className="text-slate-600"> (adopted)</span> : null}
                  </span>
                  <span className="text-xs text-slate-600" title={o.digest}>
                    {o.digest.slice(0, 12)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {node.reportReceivedAt && (
            <p className="mt-2 text-xs text-slate-600">
              Last report <RelativeTime at={node.reportReceivedAt} />
            </p>
          )}
        </Section>

        <Section title="Labels">
          <LabelsEditor nodeId={node.id} labels={node.labels} canEdit={canEdit && isLive(node.state)} />
        </Section>

        <Section title="Timeline">
          {timeline.length === 0 ? (
            <p className="text-sm text-slate-600">No events yet.</p>
          ) : (
            <ol className="max-h-72 space-y-1 overflow-y-auto text-sm" tabIndex={0} aria-label="Node events, newest first">
              {timeline.map((t) => (
                <li key={t.key} className="flex justify-between gap-2">
                  <span className={`font-mono ${t.strong ? "font-semibold" : ""} ${t.refused ? "text-rose-700" : ""}`}>
                    {t.label}
                    <span className="font-sans text-slate-600"> {t.detail}</span>
                  </span>
                  <span className="shrink-0 text-slate-600">
                    <RelativeTime at={t.at} />
                  </span>
                </li>
              ))}
            </ol>
          )}
          <p className="mt-2 text-xs">
            <Link href={`/audit?node=${node.id}`} className="underline">
              All events for this node
            </Link>
          </p>
        </Section>

        <Section title={`Grants (${node.grants.length})`}>
          {node.grants.length === 0 ? (
            <p className="text-sm text-slate-600">No credentials are granted to this node.</p>
          ) : (
            <ul className="space-y-1 text-sm">
              {node.grants.map((g) => (
                <li key={`${g.provider}:${g.principal}`} className="flex flex-wrap justify-between gap-2">
                  <span className="font-mono">
                    {g.grantId}{" "}
                    <span className="text-slate-600">
                      {g.provider}:{g.principal}
                    </span>
                  </span>
                  <span className={g.revokedAt ? "text-rose-700" : "text-slate-700"}>
                    {g.revokedAt ? (
                      <>
                        revoked <RelativeTime at={g.revokedAt} />
                      </>
                    ) : (
                      <>
                        issued <RelativeTime at={g.createdAt} />
                      </>
                    )}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Section>

        <Section title="Profile">
          <ProfileList profile={node.profile as Record<string, unknown>} />
        </Section>

        <Section title="Inventory">
          <InventoryPanel inventory={node.inventory as Inventory} />
        </Section>
      </div>
    </div>
  );
}
