"use client";
// Retire (confirm, then the page follows it live until `retired`) and Revoke
// (confirm by typing the node's name). Only shown to admins.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { isLive } from "@mesh/protocol";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { errorMessage } from "../error-message";

export function NodeActions({ node }: { node: { id: string; name: string; state: string } }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [dialog, setDialog] = useState<"retire" | "revoke" | null>(null);
  const [typed, setTyped] = useState("");
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.node.get.queryKey({ id: node.id }) });
  const retire = useMutation(trpc.node.retire.mutationOptions({ onSuccess: () => (setDialog(null), refresh()) }));
  const revoke = useMutation(trpc.node.revoke.mutationOptions({ onSuccess: () => (setDialog(null), refresh()) }));
  const live = isLive(node.state);
  if (!live && node.state !== "retiring") return null;

  return (
    <div className="flex gap-2">
      {live && (
        <Button kind="secondary" onClick={() => setDialog("retire")}>
          Retire
        </Button>
      )}
      <Button kind="danger" onClick={() => (setTyped(""), setDialog("revoke"))}>
        Revoke
      </Button>
      <Dialog open={dialog === "retire"} onClose={() => setDialog(null)} title={`Retire ${node.name}?`}>
        <p className="text-sm text-slate-700">
          The host will remove everything Mesh put on this machine, report that it owns nothing, and leave the mesh. Its credential and grants are then revoked.
        </p>
        {retire.isError && (
          <p role="alert" className="text-sm text-rose-700">
            {errorMessage(retire.error)}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDialog(null)}>Cancel</Button>
          <Button kind="danger" disabled={retire.isPending} onClick={() => retire.mutate({ id: node.id })}>
            {retire.isPending ? "Retiring…" : "Retire node"}
          </Button>
        </div>
      </Dialog>
      <Dialog open={dialog === "revoke"} onClose={() => setDialog(null)} title={`Revoke ${node.name}?`}>
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (typed === node.name) revoke.mutate({ id: node.id });
          }}
        >
          <p className="text-sm text-slate-700">
            For a lost machine: its credential and every grant are revoked at once and its link is closed. What it runs stays as it is; Mesh cannot switch it
            off.
          </p>
          <label className="block text-sm font-medium">
            Type <span className="font-mono">{node.name}</span> to confirm
            <input
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              className="mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 font-mono text-sm"
            />
          </label>
          {revoke.isError && (
            <p role="alert" className="text-sm text-rose-700">
              {errorMessage(revoke.error)}
            </p>
          )}
          <div className="flex justify-end gap-2">
            <Button onClick={() => setDialog(null)}>Cancel</Button>
            <Button type="submit" kind="danger" disabled={typed !== node.name || revoke.isPending}>
              Revoke node
            </Button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
