// On the node page (issue 14): the roles a staged rollout holds at an older version on this node,
// naming the rollout's state and linking to where it is watched and acted on.
import Link from "next/link";
import type { RolloutState } from "@mesh/protocol";
import { RolloutStateBadge } from "./rollout-state";

export interface NodeRolloutPin {
  role: string;
  version: number;
  rolloutId: string | null;
  toVersion: number | null;
  state: RolloutState | null;
}

export function RolloutNodePins({ pins }: { pins: NodeRolloutPin[] }) {
  if (pins.length === 0) return null;
  return (
    <div data-testid="node-rollout-pins" className="rounded-lg border border-sky-200 bg-sky-50 p-3 text-sm text-sky-950">
      <p className="font-medium">Held back by a staged rollout</p>
      <ul className="mt-1 space-y-1">
        {pins.map((p) => (
          <li key={p.role} className="flex flex-wrap items-center gap-2">
            <span>
              Role{" "}
              <Link href={`/roles/edit?name=${encodeURIComponent(p.role)}#rollouts`} className="font-medium underline">
                {p.role}
              </Link>{" "}
              stays at {p.version === 0 ? "none (not given yet)" : `v${p.version}`}
              {p.toVersion !== null && ` until the rollout to v${p.toVersion} reaches this node`}
            </span>
            {p.state && <RolloutStateBadge state={p.state} />}
          </li>
        ))}
      </ul>
    </div>
  );
}
