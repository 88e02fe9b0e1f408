"use client";
// One dialog for the Fleet's bulk actions, with the confirmations one node gets: retire says what the
// host will do; revoke is confirmed by typing the number of nodes; labels are parsed as the editor does.
// The nodes are resolved to ids once, when the dialog opens: the count shown, the count typed to confirm
// and every attempt (a "Save anyway" too) name exactly those ids, whatever matches the filter later.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC, useTRPCClient } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { errorMessage } from "../error-message";
import { ConflictRefusal, conflictsOf } from "../conflict-refusal";
import { parseLabels } from "../labels-input";
import { describeReconcile } from "../act-now/reconcile-answer";
import { MAX_BULK, selectedCount, type BulkSelection } from "./bulk-selection";
import type { BulkAction } from "./selection-bar";

const TITLES: Record<BulkAction, string> = { labels: "Set labels on", reconcile: "Reconcile now", retire: "Retire", revoke: "Revoke" };
const inputClass = "mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 font-mono text-sm";

type Client = ReturnType<typeof useTRPCClient>;
/** The ids a selection names now: the picked ones, or every node matching the filter (paged, at most MAX_BULK), each once. */
async function resolveIds(client: Client, selection: BulkSelection): Promise<string[]> {
  if (selection.kind === "ids") return [...new Set(selection.ids)];
  const ids = new Set<string>();
  for (let offset = 0; offset < MAX_BULK; offset += 500) {
    const page = await client.node.list.query({ ...selection.filter, limit: 500, offset });
    for (const item of page.items) ids.add(item.id);
    if (page.items.length < 500) break;
  }
  return [...ids];
}

export function BulkActionsDialog({
  action,
  selection,
  onClose,
  onDone,
}: {
  action: BulkAction | null;
  selection: BulkSelection;
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const [setText, setSetText] = useState("");
  const [removeText, setRemoveText] = useState("");
  const [typed, setTyped] = useState("");
  const [result, setResult] = useState<string | null>(null);
  // The ids this opening of the dialog acts on, resolved once as it opens (the selection the Fleet passes
  // is remade on every render and "all that match" changes as the fleet does: neither is read again).
  const [resolved, setResolved] = useState<{ ids: string[] } | { error: string } | null>(null);
  const selectionNow = useRef(selection);
  useEffect(() => {
    selectionNow.current = selection;
  });
  const open = action !== null;
  useEffect(() => {
    setResolved(null);
    if (!open) return;
    let live = true;
    resolveIds(client, selectionNow.current).then(
      (ids) => live && setResolved({ ids }),
      (err: unknown) => live && setResolved({ error: errorMessage(err) }),
    );
    return () => {
      live = false;
    };
  }, [open, client]);
  const ids = resolved && "ids" in resolved ? resolved.ids : null;
  const n = ids ? ids.length : selectedCount(selection);
  const what = `${n} node${n === 1 ? "" : "s"}`;
  const parsedSet = setText.trim() ? parseLabels(setText) : { labels: {} };
  const removeKeys = removeText
    .split(/[,\s]+/)
    .map((k) => k.trim())
    .filter(Boolean);

  const run = useMutation({
    mutationFn: async (confirmConflicts?: boolean): Promise<string> => {
      if (!ids) throw new Error("the nodes are not resolved yet");
      if (action === "reconcile") return describeReconcile(await client.node.reconcile.mutate({ ids }));
      if (action === "retire") return `${(await client.node.bulkRetire.mutate({ ids })).nodes} retiring.`;
      if (action === "revoke") return `${(await client.node.bulkRevoke.mutate({ ids })).nodes} revoked.`;
      if (!("labels" in parsedSet)) throw new Error(parsedSet.error);
      const r = await client.node.bulkSetLabels.mutate({
        ids,
        set: parsedSet.labels,
        remove: removeKeys,
        ...(confirmConflicts ? { confirmConflicts: true } : {}),
      });
      return `Labels changed on ${r.nodes} node${r.nodes === 1 ? "" : "s"}; ${r.changed} got a new declaration${r.conflicts.length ? `; ${r.conflicts.length} in conflict` : ""}.`;
    },
    onSuccess: (text) => {
      setResult(text);
      void queryClient.invalidateQueries({ queryKey: trpc.node.list.queryKey() });
      void queryClient.invalidateQueries({ queryKey: trpc.node.counts.queryKey() });
    },
  });
  // The selection is cleared once the dialog closes after a change (the dialog names what it acted on until then).
  const close = () => {
    if (result !== null && action !== "reconcile") onDone();
    setResult(null);
    setTyped("");
    run.reset();
    onClose();
  };
  const canRun =
    !run.isPending &&
    ids !== null &&
    ids.length > 0 &&
    (action === "revoke"
      ? typed.trim() === String(ids.length)
      : action === "labels"
        ? "labels" in parsedSet && (Object.keys(parsedSet.labels).length > 0 || removeKeys.length > 0)
        : true);

  return (
    <Dialog open={action !== null} onClose={close} title={action ? `${TITLES[action]} ${what}?` : ""}>
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          if (canRun) run.mutate(false);
        }}
      >
        {resolved === null && <p className="text-sm text-slate-600">Finding the nodes…</p>}
        {resolved && "error" in resolved && (
          <p role="alert" className="text-sm text-rose-700">
            {resolved.error}
          </p>
        )}
        {ids && ids.length === 0 && <p className="text-sm text-rose-700">No node matches the filter now.</p>}
        {ids && selection.kind === "matching" && ids.length > 0 && (
          <p className="text-sm text-slate-600" data-testid="bulk-resolved">
            The {what} that matched when this opened: the action applies to exactly these.
          </p>
        )}
        {action === "reconcile" && (
          <p className="text-sm text-slate-700">Each host that is linked runs one reconcile of its declaration now and reports; the others are counted.</p>
        )}
        {action === "retire" && (
          <p className="text-sm text-slate-700">
            Each host will remove everything Mesh put on its machine, report that it owns nothing, and leave the mesh. Their credentials and grants are then
            revoked.
          </p>
        )}
        {action === "revoke" && (
          <>
            <p className="text-sm text-slate-700">
              For lost machines: their credentials and every grant are revoked at once and their links are closed. What they run stays as it is; Mesh cannot
              switch a machine off.
            </p>
            <label className="block text-sm font-medium">
              Type <span className="font-mono">{n}</span> (the number of nodes) to confirm
              <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" className={inputClass} />
            </label>
          </>
        )}
        {action === "labels" && (
          <>
            <label className="block text-sm font-medium">
              Set (key=value, comma separated)
              <input
                value={setText}
                onChange={(e) => setSetText(e.target.value)}
                placeholder="tier=web, zone=a"
                aria-invalid={"error" in parsedSet}
                className={inputClass}
              />
            </label>
            {"error" in parsedSet && <p className="text-sm text-rose-700">{parsedSet.error}</p>}
            <label className="block text-sm font-medium">
              Remove (keys, comma separated)
              <input value={removeText} onChange={(e) => setRemoveText(e.target.value)} placeholder="old" className={inputClass} />
            </label>
            <p className="text-xs text-slate-600">Other labels stay. The nodes are recompiled: they gain and lose roles as their labels now select.</p>
          </>
        )}
        {run.isError &&
          (conflictsOf(run.error) ? (
            // The same rule as one node's label edit: a new conflict is named, and saved only if confirmed.
            <ConflictRefusal refusal={conflictsOf(run.error)!} pending={run.isPending} onConfirm={() => run.mutate(true)} />
          ) : (
            <p role="alert" className="text-sm text-rose-700">
              {errorMessage(run.error)}
            </p>
          ))}
        {result && (
          <p role="status" data-testid="bulk-result" className="text-sm text-emerald-800">
            {result}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={close}>{result ? "Close" : "Cancel"}</Button>
          {!result && (
            <Button type="submit" kind={action === "revoke" || action === "retire" ? "danger" : "primary"} disabled={!canRun}>
              {run.isPending ? "Working…" : action ? `${TITLES[action].replace(" on", "")} ${what}` : ""}
            </Button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
