// A rollout's state, coloured the same way in the list and the detail.
import type { RolloutState } from "@mesh/protocol";

const COLOURS: Record<RolloutState, string> = {
  running: "bg-sky-100 text-sky-900 ring-sky-200",
  paused: "bg-amber-100 text-amber-900 ring-amber-200",
  halted: "bg-rose-100 text-rose-900 ring-rose-300",
  completed: "bg-emerald-100 text-emerald-900 ring-emerald-200",
  superseded: "bg-slate-100 text-slate-800 ring-slate-200",
  "rolled-back": "bg-violet-100 text-violet-900 ring-violet-200",
};

/** Running, paused or halted: still holds pins, can be acted on. */
export const isActive = (state: RolloutState) => state === "running" || state === "paused" || state === "halted";

export function RolloutStateBadge({ state }: { state: RolloutState }) {
  return (
    <span data-testid="rollout-state" className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${COLOURS[state]}`}>
      {state}
    </span>
  );
}

/** "user:ana" reads "ana", "key:ci" reads "ci (API key)", as the version list names them. */
export function actorText(actor: string): string {
  const [kind, ...rest] = actor.split(":");
  const name = rest.join(":");
  if (kind === "user" && name) return name;
  if (kind === "key" && name) return `${name} (API key)`;
  return actor;
}
