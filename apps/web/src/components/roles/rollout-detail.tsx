"use client";
// One rollout in detail, polled every 2 s while it can still move: its state, each wave's counts,
// why it halted, who started it and from which plan; admins may pause, resume, continue past a
// halt or roll back (the last two after a confirmation saying what they do to the machines).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { RelativeTime } from "../relative-time";
import { ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { policyInWords } from "./rollout-choice";
import { RolloutStateBadge, actorText, isActive } from "./rollout-state";
import { RolloutConfirm, type ConfirmedAct } from "./rollout-confirm";

const waveName = (w: number) => (w === 0 ? "Canary" : `Wave ${w}`);

export function RolloutDetail({ id, isAdmin }: { id: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const r = useQuery(trpc.rollout.get.queryOptions({ id }, { refetchInterval: (q) => (q.state.data && !isActive(q.state.data.state) ? false : 2000) }));
  const [confirming, setConfirming] = useState<ConfirmedAct | null>(null);
  const done = () => void queryClient.invalidateQueries({ queryKey: trpc.rollout.pathKey() });
  const opts = { onSuccess: done };
  const pause = useMutation(trpc.rollout.pause.mutationOptions(opts));
  const resume = useMutation(trpc.rollout.resume.mutationOptions(opts));
  const cont = useMutation(trpc.rollout.continue.mutationOptions(opts));
  const rollback = useMutation(
    trpc.rollout.rollback.mutationOptions({
      onSuccess: () => {
        done();
        void queryClient.invalidateQueries({ queryKey: trpc.role.pathKey() });
        // The editor above reloads with the content the role holds now (a new version).
        router.refresh();
      },
    }),
  );
  const failedAct = [pause, resume, cont, rollback].find((m) => m.isError);
  const busy = [pause, resume, cont, rollback].some((m) => m.isPending);

  if (r.isError) return <ErrorState error={r.error} title="Could not load the rollout" />;
  if (!r.data) return <LoadingState label="Loading the rollout…" />;
  const d = r.data;
  const canRollBack = ["running", "paused", "halted", "completed"].includes(d.state) && d.fromVersion > 0;

  return (
    <div data-testid="rollout-detail" data-state={d.state} className="space-y-3 text-sm">
      <p className="flex flex-wrap items-center gap-2">
        <span className="font-semibold">
          {d.rollbackOf ? "Rollback" : "Rollout"} of v{d.toVersion} (from v{d.fromVersion})
        </span>
        <RolloutStateBadge state={d.state} />
      </p>
      <p>
        Started by <strong>{actorText(d.actor)}</strong> <RelativeTime at={d.createdAt} /> from a plan reaching{" "}
        <strong data-testid="rollout-plan-nodes">{d.plan.nodes}</strong> node{d.plan.nodes === 1 ? "" : "s"} ({d.plan.unchanged} unchanged), in waves of{" "}
        {d.plan.waves.join(", ")}: {policyInWords(d.policy)}.
        {d.finishedAt && (
          <>
            {" "}
            Finished <RelativeTime at={d.finishedAt} />.
          </>
        )}
      </p>
      {d.state === "halted" && (
        <div data-testid="rollout-halt" role="alert" className="rounded border border-rose-300 bg-rose-50 p-3 text-rose-900">
          <p className="font-semibold">Halted at {waveName(d.currentWave).toLowerCase()}</p>
          <p data-testid="rollout-halt-reason">{d.haltReason ?? "no reason recorded"}</p>
          <p className="mt-1">The nodes not reached yet keep the version they had. Continue past the halt, or roll back the nodes already changed.</p>
        </div>
      )}
      {d.state === "paused" && (
        <p className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-900">Paused: no further wave is released until an admin resumes it.</p>
      )}
      <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Waves">
        <table data-testid="rollout-waves" className="w-full text-left tabular-nums">
          <thead className="text-xs uppercase text-slate-600">
            <tr>
              <th scope="col" className="py-1 pr-3">
                Wave
              </th>
              <th scope="col" className="pr-3">
                Nodes
              </th>
              <th scope="col" className="pr-3">
                Applied
              </th>
              <th scope="col" className="pr-3">
                Failed
              </th>
              <th scope="col" className="pr-3">
                Timed out
              </th>
              <th scope="col">Pending</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-200">
            {d.waveCounts.map((w) => (
              <tr
                key={w.wave}
                data-testid="rollout-wave"
                data-wave={w.wave}
                aria-current={w.wave === d.currentWave && isActive(d.state) ? "step" : undefined}
                className={w.wave === d.currentWave && isActive(d.state) ? "bg-sky-50" : ""}
              >
                <th scope="row" className="py-1 pr-3 font-medium">
                  {waveName(w.wave)}
                  {w.wave > d.currentWave && <span className="ml-1 font-normal text-slate-600">(not released)</span>}
                </th>
                <td className="pr-3">{w.nodes}</td>
                <td className="pr-3" data-testid="wave-applied">
                  {w.applied}
                </td>
                <td className={`pr-3 ${w.failed ? "font-semibold text-rose-700" : ""}`} data-testid="wave-failed">
                  {w.failed}
                </td>
                <td className={`pr-3 ${w.timedOut ? "font-semibold text-rose-700" : ""}`} data-testid="wave-timed-out">
                  {w.timedOut}
                </td>
                <td data-testid="wave-pending">{w.pending}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {isAdmin && (isActive(d.state) || canRollBack) && (
        <div className="flex flex-wrap gap-2">
          {d.state === "running" && (
            <Button disabled={busy} onClick={() => pause.mutate({ id })}>
              Pause
            </Button>
          )}
          {d.state === "paused" && (
            <Button disabled={busy} onClick={() => resume.mutate({ id })}>
              Resume
            </Button>
          )}
          {d.state === "halted" && (
            <Button disabled={busy} onClick={() => setConfirming("continue")}>
              Continue past halt
            </Button>
          )}
          {canRollBack && (
            <Button kind="danger" disabled={busy} onClick={() => setConfirming("rollback")}>
              Roll back
            </Button>
          )}
        </div>
      )}
      {failedAct && (
        <p role="alert" className="text-rose-700">
          Not done: {errorMessage(failedAct.error)}
        </p>
      )}
      {confirming && (
        <RolloutConfirm
          act={confirming}
          rollout={d}
          pending={busy}
          onClose={() => setConfirming(null)}
          onConfirm={() => {
            const close = { onSettled: () => setConfirming(null) };
            if (confirming === "continue") cont.mutate({ id }, close);
            else rollback.mutate({ id }, close);
          }}
        />
      )}
      {d.history.length > 0 && (
        <details>
          <summary className="cursor-pointer text-slate-700">History ({d.history.length})</summary>
          <ol data-testid="rollout-history" className="mt-1 space-y-0.5">
            {d.history.map((h, i) => (
              <li key={i}>
                <RelativeTime at={h.at} /> {actorText(h.actor)}: {h.action.replace(/^rollout\./, "")}
                {h.result !== "ok" && <span className="text-rose-700"> ({h.result})</span>}
              </li>
            ))}
          </ol>
        </details>
      )}
    </div>
  );
}
