"use client";
// A webhook's last delivery attempts (polled like the rest of the dashboard): when, what, and how it went.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { ColumnHeads } from "../column-heads";
import { RelativeTime } from "../relative-time";
import { ErrorState } from "../states";

export function DeliveryLog({ id, name }: { id: string; name: string }) {
  const trpc = useTRPC();
  const log = useQuery({ ...trpc.alert.attempts.queryOptions({ id }), refetchInterval: 2_000 });
  if (log.isError) return <ErrorState error={log.error} />;
  const items = log.data?.items ?? [];
  return (
    <div className="mt-2 overflow-x-auto" tabIndex={0} role="region" aria-label={`Delivery log of ${name}`}>
      {items.length === 0 ? (
        <p className="text-xs text-slate-600">No deliveries yet.</p>
      ) : (
        <table className="min-w-full text-xs">
          <ColumnHeads names={["When", "Event", "Result", "Error"]} cell="px-2 py-1" />
          <tbody className="divide-y divide-slate-100">
            {items.map((a) => (
              <tr key={a.id} data-testid="delivery-attempt">
                <td className="px-2 py-1">
                  <RelativeTime at={a.at} />
                </td>
                <td className="px-2 py-1">{a.event}</td>
                <td className={`px-2 py-1 font-medium ${a.ok ? "text-emerald-800" : "text-rose-800"}`}>
                  {a.ok ? `delivered (${a.httpStatus})` : a.httpStatus ? `failed (${a.httpStatus})` : "failed"}
                </td>
                <td className="px-2 py-1 text-slate-700">{a.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
