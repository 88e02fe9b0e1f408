"use client";
// The confirmation before an act on a rollout that changes machines: continuing past a halt sends
// the new version to the next wave; rolling back sends the old version's content to every node
// already changed, in the same waves.
import { Button } from "../button";
import { Dialog } from "../dialog";

export type ConfirmedAct = "continue" | "rollback";

interface Shown {
  roleName: string;
  fromVersion: number;
  toVersion: number;
  currentWave: number;
  waves: number;
  waveCounts: Array<{ wave: number; nodes: number }>;
}

export function RolloutConfirm({
  act,
  rollout: r,
  pending,
  onClose,
  onConfirm,
}: {
  act: ConfirmedAct;
  rollout: Shown;
  pending: boolean;
  onClose: () => void;
  onConfirm: () => void;
}) {
  const released = r.waveCounts.filter((w) => w.wave <= r.currentWave).reduce((n, w) => n + w.nodes, 0);
  const next = r.waveCounts.find((w) => w.wave === r.currentWave + 1);
  return (
    <Dialog open onClose={onClose} title={act === "continue" ? "Continue past the halt?" : `Roll back ${r.roleName} to v${r.fromVersion}?`}>
      <div data-testid="rollout-confirm" className="space-y-2 text-sm">
        {act === "continue" ? (
          <p>
            The halted wave stays as it is (its failed nodes keep failing until fixed).{" "}
            {next
              ? `The next wave (${next.nodes} node${next.nodes === 1 ? "" : "s"}) gets v${r.toVersion} of ${r.roleName} at once, and the rollout goes on wave by wave, halting again on failures.`
              : `It was the last wave: the rollout completes.`}
          </p>
        ) : (
          <p>
            Saves v{r.fromVersion}&apos;s content of {r.roleName} as a new version and rolls it out to the {released} node{released === 1 ? "" : "s"} already
            changed, in the same waves (the first at once). The nodes not reached yet just keep v{r.fromVersion}&apos;s content. This rollout becomes
            rolled-back.
          </p>
        )}
      </div>
      <div className="flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button kind={act === "rollback" ? "danger" : "primary"} disabled={pending} onClick={onConfirm}>
          {act === "continue" ? "Continue the rollout" : `Roll back to v${r.fromVersion}`}
        </Button>
      </div>
    </Dialog>
  );
}
