"use client";
// Correct or accept the drift of `onDrift: report` resources: correct puts the declared state back
// once; accept keeps the machine as it is and stops reporting that drift until it changes again.
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { errorMessage } from "../error-message";

export function DriftDecisions({ nodeId, resourceId }: { nodeId: string; resourceId: string }) {
  const trpc = useTRPC();
  const correct = useMutation(trpc.node.correctDrift.mutationOptions());
  const accept = useMutation(trpc.node.acceptDrift.mutationOptions());
  const busy = correct.isPending || accept.isPending;
  const error = correct.error ?? accept.error;
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <Button disabled={busy} onClick={() => correct.mutate({ id: nodeId, resourceIds: [resourceId] })} aria-label={`Correct drift of ${resourceId}`}>
        Correct
      </Button>
      <Button disabled={busy} onClick={() => accept.mutate({ id: nodeId, resourceIds: [resourceId] })} aria-label={`Accept drift of ${resourceId}`}>
        Accept
      </Button>
      <span role="status" className="text-xs text-slate-700">
        {correct.isSuccess ? "Asked the host to correct it." : accept.isSuccess ? "Asked the host to accept it." : error ? errorMessage(error) : ""}
      </span>
    </span>
  );
}
