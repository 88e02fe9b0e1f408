"use client";
// Reconcile now, from the node page: the host runs one reconcile at once and reports; the answer says
// whether the host was asked, is offline or is too old to be asked.
import { useMutation } from "@tanstack/react-query";
import { isLive } from "@mesh/protocol";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { errorMessage } from "../error-message";
import { describeReconcile } from "../act-now/reconcile-answer";

export function ReconcileNowButton({ node }: { node: { id: string; state: string } }) {
  const trpc = useTRPC();
  const reconcile = useMutation(trpc.node.reconcile.mutationOptions());
  if (!isLive(node.state)) return null;
  return (
    <div className="flex flex-col items-end gap-1">
      <Button kind="secondary" disabled={reconcile.isPending} onClick={() => reconcile.mutate({ ids: [node.id] })}>
        {reconcile.isPending ? "Asking…" : "Reconcile now"}
      </Button>
      <p role="status" data-testid="reconcile-answer" className="text-xs text-slate-700">
        {reconcile.isSuccess ? describeReconcile(reconcile.data) : reconcile.isError ? errorMessage(reconcile.error) : ""}
      </p>
    </div>
  );
}
