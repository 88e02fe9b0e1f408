"use client";
// Forget a node: a retired or revoked node leaves the Fleet list (its audit history stays). A node
// stuck `retiring` (its host never came back) is forgotten and revoked together, or only revoked.
// Neither does anything to the machine: the mesh cannot switch a machine off.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { errorMessage } from "../error-message";

export function ForgetNode({ node }: { node: { id: string; name: string; state: string; forgottenAt?: string | Date | null } }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const done = () => (setOpen(false), queryClient.invalidateQueries({ queryKey: trpc.node.get.queryKey({ id: node.id }) }));
  const forget = useMutation(trpc.node.forget.mutationOptions({ onSuccess: done }));
  const revoke = useMutation(trpc.node.revoke.mutationOptions({ onSuccess: done }));
  if (node.forgottenAt) return <p className="text-sm text-slate-700">Forgotten: not in the Fleet list; its history stays here.</p>;
  if (!["retired", "revoked", "retiring"].includes(node.state)) return null;
  const retiring = node.state === "retiring";
  const error = forget.error ?? revoke.error;
  return (
    <>
      <Button kind="secondary" onClick={() => setOpen(true)}>
        Forget
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={`Forget ${node.name}?`}>
        {retiring ? (
          <div className="space-y-2 text-sm text-slate-700">
            <p>This node is retiring, but its host has not come back to finish. You can:</p>
            <ul className="list-disc space-y-1 pl-5">
              <li>
                <strong>Forget</strong>: its credential and grants are revoked and it leaves the Fleet list. Its audit history stays.
              </li>
              <li>
                <strong>Revoke only</strong>: its credential and grants are revoked; it stays in the list as revoked.
              </li>
            </ul>
            <p>Neither does anything to the machine: what Mesh put there stays, and whatever runs keeps running. Mesh cannot switch a machine off.</p>
          </div>
        ) : (
          <p className="text-sm text-slate-700">
            It leaves the Fleet list and the counts; its audit history and this page stay. Nothing happens to the machine (it is already {node.state}; Mesh
            cannot switch it off). To manage the machine again, enrol it anew.
          </p>
        )}
        {error && (
          <p role="alert" className="text-sm text-rose-700">
            {errorMessage(error)}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          {retiring && (
            <Button kind="secondary" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: node.id })}>
              Revoke only
            </Button>
          )}
          <Button kind="danger" disabled={forget.isPending} onClick={() => forget.mutate({ ids: [node.id] })}>
            Forget node
          </Button>
        </div>
      </Dialog>
    </>
  );
}
