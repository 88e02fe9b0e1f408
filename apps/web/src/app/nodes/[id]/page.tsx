import Link from "next/link";
import { notFound } from "next/navigation";
import { TRPCError } from "@trpc/server";
import { dashboardCaller } from "@/server/caller";
import { Shell } from "@/components/shell";
import { StateBadge } from "@/components/state-badge";
import { RelativeTime } from "@/components/relative-time";
import { AutoRefresh } from "@/components/auto-refresh";
import type { ReactNode } from "react";
import { resourceSubject, type Resource } from "@mesh/protocol";

export const dynamic = "force-dynamic";

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4">
      <h2 className="mb-3 text-sm font-semibold uppercase tracking-wide text-slate-500">{title}</h2>
      {children}
    </section>
  );
}

export default async function NodePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const api = await dashboardCaller();
  let node;
  try {
    node = await api.node.get({ id });
  } catch (err) {
    if (err instanceof TRPCError && (err.code === "NOT_FOUND" || err.code === "BAD_REQUEST")) notFound();
    throw err;
  }
  const profile = node.profile as Record<string, string | number>;
  const inventory = node.inventory as { packages: unknown[]; units: unknown[]; ports: unknown[]; mounts: unknown[] };
  const resources = (node.declaration?.resources ?? []) as Resource[];
  return (
    <Shell>
      <AutoRefresh />
      <p className="mb-2 text-sm">
        <Link href="/" className="text-slate-600 hover:underline">
          ← Fleet
        </Link>
      </p>
      <div className="mb-6 flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">{node.name}</h1>
        <StateBadge state={node.state} />
        <span className="text-sm text-slate-600">
          declared v{node.declaredVersion}, applied v{node.appliedVersion} · last seen <RelativeTime at={node.lastSeenAt} />
        </span>
      </div>
      {node.storeLost && (
        <p role="alert" className="mb-4 rounded-md border border-rose-200 bg-rose-50 p-3 text-sm text-rose-800">
          This host lost its local store: it can no longer remove what it created before. The last owned set it reported is kept below.
        </p>
      )}
      {node.conflicts.length > 0 && (
        <div role="alert" data-testid="conflicts" className="mb-4 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm text-amber-900">
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
      <div className="grid gap-4 md:grid-cols-2">
        <Section title="Labels">
          {Object.keys(node.labels).length === 0 ? (
            <p className="text-sm text-slate-500">No labels.</p>
          ) : (
            <ul className="flex flex-wrap gap-2 text-sm">
              {Object.entries(node.labels).map(([k, v]) => (
                <li key={k} className="rounded bg-slate-100 px-2 py-0.5 font-mono">
                  {k}={v}
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title="Profile">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
            {Object.entries(profile).map(([k, v]) => (
              <div key={k} className="contents">
                <dt className="text-slate-500">{k}</dt>
                <dd className="break-all font-mono">{String(v)}</dd>
              </div>
            ))}
          </dl>
        </Section>
        <Section title="Inventory">
          <ul className="text-sm">
            <li>{inventory.packages?.length ?? 0} packages</li>
            <li>{inventory.units?.length ?? 0} systemd units</li>
            <li>{inventory.ports?.length ?? 0} listening ports</li>
            <li>{inventory.mounts?.length ?? 0} mounts</li>
          </ul>
        </Section>
        <Section title={`Declaration v${node.declaration?.version ?? 0}`}>
          {resources.length === 0 ? (
            <p className="text-sm text-slate-500">Nothing declared: no role matches this node.</p>
          ) : (
            <ul className="space-y-1 text-sm">
              {resources.map((r) => (
                <li key={r.id} className="font-mono">
                  <span className="text-slate-500">{r.type}</span> {resourceSubject(r).replace(/^\w+:/, "")} <span className="text-slate-400">({r.id})</span>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title={`Owned (${node.owned.length})`}>
          {node.owned.length === 0 ? (
            <p className="text-sm text-slate-500">The host owns nothing yet.</p>
          ) : (
            <ul data-testid="owned" className="space-y-1 text-sm">
              {node.owned.map((o) => (
                <li key={o.id} className="font-mono">
                  {o.id} <span className="text-slate-500">{o.type}</span> <span className="text-slate-400">{o.digest.slice(0, 12)}</span>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title={`Drift (${node.drift.length})`}>
          {node.drift.length === 0 ? (
            <p className="text-sm text-slate-500">No drift in the last report.</p>
          ) : (
            <ul className="space-y-1 text-sm">
              {node.drift.map((d) => (
                <li key={d.id}>
                  <span className="font-mono">{d.id}</span>: {d.description} {d.corrected ? "(corrected)" : ""}
                </li>
              ))}
            </ul>
          )}
          {node.errors.length > 0 && (
            <ul className="mt-3 space-y-1 text-sm text-rose-700">
              {node.errors.map((e, i) => (
                <li key={i}>
                  {e.id ?? "declaration"}: {e.message}
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title="Events">
          <ul className="space-y-1 text-sm">
            {node.events.map((e) => (
              <li key={e.id} className="flex justify-between gap-2">
                <span className="font-mono">{e.action}</span>
                <span className="text-slate-500">
                  <RelativeTime at={e.at} />
                </span>
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </Shell>
  );
}
