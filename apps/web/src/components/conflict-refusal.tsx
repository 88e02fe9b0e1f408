"use client";
// A save refused because it would put nodes into conflict (CONFLICT with data.details from
// check-conflicts.ts): each conflict named, with how many nodes and a few of them, and a
// button that sends the same save again with confirmConflicts.
import { NodeLinks } from "./node-links";
import { Button } from "./button";

interface Finding {
  key: string;
  roles: [string, string];
  nodes: number;
  sample: Array<{ id: string; name: string }>;
}

/** The conflicts of a refused save, or null when the error is something else. */
export function conflictsOf(err: unknown): { nodes: number; conflicts: Finding[] } | null {
  const data = (err as { data?: { code?: string; details?: { nodes?: number; conflicts?: Finding[] } } } | null)?.data;
  if (data?.code !== "CONFLICT" || !Array.isArray(data.details?.conflicts)) return null;
  return { nodes: data.details.nodes ?? 0, conflicts: data.details.conflicts };
}

export function ConflictRefusal({
  refusal,
  onConfirm,
  pending,
}: {
  refusal: { nodes: number; conflicts: Finding[] };
  onConfirm: () => void;
  pending: boolean;
}) {
  return (
    <div role="alert" data-testid="conflict-refusal" className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950">
      <p className="font-medium">
        Not saved: this would put {refusal.nodes} node{refusal.nodes === 1 ? "" : "s"} into conflict. A node in conflict gets nothing new until the conflict is
        resolved.
      </p>
      <ul className="list-disc space-y-1 pl-5">
        {refusal.conflicts.map((c) => (
          <li key={`${c.key} ${c.roles.join(" ")}`} data-testid="conflict-item">
            <code>{c.key}</code> is declared differently by roles <strong>{c.roles[0]}</strong> and <strong>{c.roles[1]}</strong> on {c.nodes} node
            {c.nodes === 1 ? "" : "s"}: <NodeLinks nodes={c.sample} total={c.nodes} />
          </li>
        ))}
      </ul>
      <Button kind="danger" onClick={onConfirm} disabled={pending}>
        {pending ? "Saving…" : "Save anyway (nodes stay in conflict)"}
      </Button>
    </div>
  );
}
