"use client";
// Rename a node (issue 13): an admin gives it the name the dashboard shows; empty gives back the
// hostname, which the page keeps showing beside a display name. Escape cancels; focus goes back to
// the button that opened the form.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { errorMessage } from "../error-message";

const NAME_MAX = 64;

export function NodeRename({ nodeId, name, hostname, displayName }: { nodeId: string; name: string; hostname: string; displayName: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const input = useRef<HTMLInputElement>(null);
  const close = () => (setEditing(false), requestAnimationFrame(() => document.getElementById("rename-node")?.focus()));
  const save = useMutation(
    trpc.node.rename.mutationOptions({
      onSuccess: () => (close(), queryClient.invalidateQueries({ queryKey: trpc.node.get.queryKey({ id: nodeId }) })),
    }),
  );
  useEffect(() => {
    if (editing) input.current?.focus();
  }, [editing]);
  const tooLong = text.trim().length > NAME_MAX;
  if (!editing)
    return (
      <Button id="rename-node" onClick={() => (setText(displayName ?? ""), save.reset(), setEditing(true))} aria-label={`Rename ${name}`}>
        Rename
      </Button>
    );
  return (
    <form
      className="flex flex-wrap items-end gap-2"
      aria-label="Rename node"
      onSubmit={(e) => {
        e.preventDefault();
        if (!tooLong) save.mutate({ id: nodeId, name: text });
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") close();
      }}
    >
      <label className="flex flex-col gap-1 text-sm font-medium">
        Display name (empty: the hostname, {hostname})
        <input
          ref={input}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={hostname}
          aria-invalid={tooLong}
          className="rounded-md border border-slate-300 px-2.5 py-1.5 text-sm"
        />
      </label>
      <Button type="submit" kind="primary" disabled={tooLong || save.isPending}>
        Save name
      </Button>
      <Button onClick={close}>Cancel</Button>
      {tooLong && <p className="basis-full text-sm text-rose-700">A name is at most {NAME_MAX} characters.</p>}
      {save.isError && (
        <p role="alert" className="basis-full text-sm text-rose-700">
          {errorMessage(save.error)}
        </p>
      )}
    </form>
  );
}
