"use client";
// A node's labels; an admin edits them as `key=value, ...` (node.setLabels
// recompiles the node, so roles selected by labels follow at once). The plan of the edit
// (node.planLabels) shows before saving; a save that would put the node into conflict is
// refused, naming it, with a button to confirm. Opening the editor puts focus in its field;
// Cancel, Escape or a save closes it and puts focus back on Edit.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useDeferredValue, useEffect, useRef, useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { LabelChips } from "../label-chips";
import { formatLabels, parseLabels } from "../labels-input";
import { errorMessage } from "../error-message";
import { ConflictRefusal, conflictsOf } from "../conflict-refusal";
import { LabelsPlan } from "./labels-plan";

export function LabelsEditor({ nodeId, labels, canEdit }: { nodeId: string; labels: Record<string, string>; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const field = useRef<HTMLInputElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  // Focus follows the editor once it has rendered: into the field on open, back to Edit on close
  // (not on the first render, which must not steal focus from the page).
  const opened = useRef(false);
  useEffect(() => {
    if (editing) field.current?.focus();
    else if (opened.current) editButton.current?.focus();
    opened.current ||= editing;
  }, [editing]);
  const save = useMutation(
    trpc.node.setLabels.mutationOptions({
      onSuccess: () => (setEditing(false), queryClient.invalidateQueries({ queryKey: trpc.node.get.queryKey({ id: nodeId }) })),
    }),
  );
  const close = () => (setEditing(false), save.reset());
  const parsed = parseLabels(text);
  const proposed = useDeferredValue("labels" in parsed ? parsed.labels : null);
  const plan = useQuery({
    ...trpc.node.planLabels.queryOptions({ id: nodeId, labels: proposed ?? {} }),
    enabled: editing && canEdit && proposed !== null,
    placeholderData: keepPreviousData,
  });
  const refusal = save.isError ? conflictsOf(save.error) : null;
  if (!editing)
    return (
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <LabelChips labels={labels} />
        {canEdit && (
          <Button ref={editButton} onClick={() => (setText(formatLabels(labels)), setEditing(true))} aria-label="Edit labels">
            Edit
          </Button>
        )}
      </div>
    );
  return (
    <form
      className="space-y-2"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !e.defaultPrevented) e.preventDefault(), close();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        if ("labels" in parsed) save.mutate({ id: nodeId, labels: parsed.labels });
      }}
    >
      <label className="block text-sm font-medium">
        Labels (key=value, comma separated)
        <input
          ref={field}
          value={text}
          onChange={(e) => (setText(e.target.value), save.reset())}
          aria-invalid={"error" in parsed}
          className="mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 font-mono text-sm"
        />
      </label>
      {"error" in parsed && <p className="text-sm text-rose-700">{parsed.error}</p>}
      {"labels" in parsed && plan.data && <LabelsPlan plan={plan.data} />}
      {refusal && "labels" in parsed && (
        <ConflictRefusal
          refusal={refusal}
          pending={save.isPending}
          onConfirm={() => save.mutate({ id: nodeId, labels: parsed.labels, confirmConflicts: true })}
        />
      )}
      {save.isError && !refusal && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(save.error)}
        </p>
      )}
      <div className="flex gap-2">
        <Button type="submit" kind="primary" disabled={"error" in parsed || save.isPending}>
          Save labels
        </Button>
        <Button onClick={close}>Cancel</Button>
      </div>
    </form>
  );
}
