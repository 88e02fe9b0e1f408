"use client";
// The Fleet's selection: how many nodes are picked, "all that match the filter", and the bulk actions.
import { Button } from "../button";
import { MAX_BULK, selectedCount, type BulkSelection } from "./bulk-selection";

export type BulkAction = "labels" | "reconcile" | "retire" | "revoke";

export function SelectionBar({
  selection,
  matching,
  onSelectMatching,
  onClear,
  onAction,
}: {
  selection: BulkSelection;
  matching: number;
  onSelectMatching: () => void;
  onClear: () => void;
  onAction: (action: BulkAction) => void;
}) {
  const n = selectedCount(selection);
  return (
    <div
      role="region"
      aria-label="Selected nodes"
      data-testid="selection-bar"
      className="flex flex-wrap items-center gap-2 rounded-lg border border-sky-200 bg-sky-50 p-2 text-sm"
    >
      <span className="font-medium" aria-live="polite">
        {selection.kind === "matching" ? `All ${n} matching node${n === 1 ? "" : "s"} selected` : `${n} node${n === 1 ? "" : "s"} selected`}
      </span>
      {selection.kind === "ids" && matching > n && (
        <button type="button" className="underline" onClick={onSelectMatching}>
          Select all {matching} matching
        </button>
      )}
      {n > MAX_BULK && <span className="text-rose-800">At most {MAX_BULK} nodes per action: narrow the filter.</span>}
      <span className="flex-1" />
      <Button onClick={() => onAction("labels")} disabled={n > MAX_BULK}>
        Set labels
      </Button>
      <Button onClick={() => onAction("reconcile")} disabled={n > MAX_BULK}>
        Reconcile now
      </Button>
      <Button onClick={() => onAction("retire")} disabled={n > MAX_BULK}>
        Retire
      </Button>
      <Button kind="danger" onClick={() => onAction("revoke")} disabled={n > MAX_BULK}>
        Revoke
      </Button>
      <Button onClick={onClear}>Clear</Button>
    </div>
  );
}
