"use client";
// The audit trail: every mutation and what hosts reported, newest first,
// filterable by actor, action and node, paged by the last id seen.
import Link from "next/link";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { RelativeTime } from "../relative-time";
import { ColumnHeads } from "../column-heads";
import { EmptyState, ErrorState, LoadingState } from "../states";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function AuditView({ initialNode }: { initialNode?: string }) {
  const trpc = useTRPC();
  const [actor, setActor] = useState("");
  const [action, setAction] = useState("");
  const [node, setNode] = useState(initialNode ?? "");
  const [pages, setPages] = useState<number[]>([]);
  const a = useDeferredValue(actor.trim());
  const ac = useDeferredValue(action.trim());
  const n = useDeferredValue(node.trim());
  const before = pages[pages.length - 1];
  const reset = () => setPages([]);
  const events = useQuery(
    trpc.event.list.queryOptions(
      { limit: 50, ...(before ? { before } : {}), ...(a ? { actor: a } : {}), ...(ac ? { action: ac } : {}), ...(UUID.test(n) ? { nodeId: n } : {}) },
      { refetchInterval: before ? false : 5000, placeholderData: keepPreviousData },
    ),
  );
  const field = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";
  return (
    <div className="space-y-4">
      <form role="search" aria-label="Filter events" className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Actor
          <input value={actor} onChange={(e) => (setActor(e.target.value), reset())} placeholder="user:admin" className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Action
          <input value={action} onChange={(e) => (setAction(e.target.value), reset())} placeholder="role.upsert" className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Node id
          <input value={node} onChange={(e) => (setNode(e.target.value), reset())} placeholder="uuid" aria-invalid={!!n && !UUID.test(n)} className={`${field} w-80 max-w-full`} />
        </label>
      </form>
      {events.isPending ? (
        <LoadingState label="Loading events…" />
      ) : events.isError ? (
        <ErrorState error={events.error} title="Could not load events" />
      ) : events.data.items.length === 0 ? (
        <EmptyState>No event matches.</EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="min-w-full text-sm">
            <ColumnHeads names={["When", "Actor", "Action", "Node / target", "Result", "Data"]} cell="px-3 py-2" className="bg-slate-50 text-left text-slate-700" />
            <tbody className="divide-y divide-slate-100">
              {events.data.items.map((e) => (
                <tr key={e.id} data-testid="event-row">
                  <td className="whitespace-nowrap px-3 py-2 text-slate-700"><RelativeTime at={e.at} /></td>
                  <td className="px-3 py-2">
                    <button type="button" className="underline-offset-2 hover:underline" onClick={() => (setActor(e.actor), reset())}>{e.actor}</button>
                  </td>
                  <td className="px-3 py-2 font-mono">
                    <button type="button" className="underline-offset-2 hover:underline" onClick={() => (setAction(e.action), reset())}>{e.action}</button>
                  </td>
                  <td className="px-3 py-2">
                    {e.nodeId ? <Link prefetch={false} href={`/nodes/${e.nodeId}`} className="underline">{e.nodeName ?? e.nodeId.slice(0, 8)}</Link> : <span className="font-mono text-slate-700">{e.target ?? ""}</span>}
                  </td>
                  <td className={`px-3 py-2 ${e.result === "ok" ? "text-slate-700" : "font-medium text-rose-700"}`}>{e.result}</td>
                  <td className="max-w-xs truncate px-3 py-2 font-mono text-xs text-slate-600" title={JSON.stringify(e.data)}>{JSON.stringify(e.data)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Event pages" className="flex gap-2">
        <Button disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>Newer</Button>
        <Button disabled={!events.data?.nextBefore} onClick={() => events.data?.nextBefore && setPages([...pages, events.data.nextBefore])}>Older</Button>
      </nav>
    </div>
  );
}
