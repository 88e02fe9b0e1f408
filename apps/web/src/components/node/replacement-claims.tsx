"use client";
// A machine that enrolled claiming to be a live node without its key: shown on the
// node's page and on the pending node's own page, with Approve / Reject for admins.
import Link from "next/link";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { RelativeTime } from "../relative-time";
import { errorMessage } from "../error-message";

interface Claim {
  /** The pending node holding the claimed key. */
  id: string;
  address: string | null;
  at: Date | string;
  hostname: string | null;
}

function ClaimActions({ claim, nodeName, onDone }: { claim: Claim; nodeName: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [confirming, setConfirming] = useState(false);
  const approve = useMutation(trpc.node.approveReplacement.mutationOptions({ onSuccess: () => (setConfirming(false), onDone()) }));
  const reject = useMutation(trpc.node.rejectReplacement.mutationOptions({ onSuccess: onDone }));
  const error = approve.error ?? reject.error;
  return (
    <div className="mt-2 flex flex-wrap items-center gap-2">
      <Button kind="primary" onClick={() => setConfirming(true)}>
        Approve replacement
      </Button>
      <Button kind="danger" disabled={reject.isPending} onClick={() => reject.mutate({ id: claim.id })}>
        {reject.isPending ? "Rejecting…" : "Reject"}
      </Button>
      {error && !confirming && (
        <span role="alert" className="text-sm text-rose-700">
          {errorMessage(error)}
        </span>
      )}
      <Dialog open={confirming} onClose={() => setConfirming(false)} title={`Hand ${nodeName} to this machine?`}>
        <p className="text-sm text-slate-700">
          Approve only if you know this machine is {nodeName}: it lost its state directory or was reinstalled. The node keeps its id, labels, declaration and
          grants, and the machine re-applies them. The key {nodeName} holds now is refused from then on and its open link is closed.
        </p>
        {approve.isError && (
          <p role="alert" className="text-sm text-rose-700">
            {errorMessage(approve.error)}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setConfirming(false)}>Cancel</Button>
          <Button kind="primary" disabled={approve.isPending} onClick={() => approve.mutate({ id: claim.id })}>
            {approve.isPending ? "Approving…" : "Approve replacement"}
          </Button>
        </div>
      </Dialog>
    </div>
  );
}

export function ReplacementClaims({
  node,
  canEdit,
}: {
  node: { id: string; name: string; state: string; replacesNodeId: string | null; enrolledFrom: string | null; createdAt: Date | string; claims: Claim[] };
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.node.get.queryKey() });
  if (node.state === "pending" && node.replacesNodeId) {
    const self: Claim = { id: node.id, address: node.enrolledFrom, at: node.createdAt, hostname: null };
    return (
      <div role="alert" data-testid="replacement-claim" className="rounded-md border border-violet-200 bg-violet-50 p-3 text-sm text-violet-900">
        <p>
          Awaiting approval: this machine enrolled from <span className="font-mono">{node.enrolledFrom ?? "an unknown address"}</span>{" "}
          <RelativeTime at={node.createdAt} /> claiming to be node{" "}
          <Link href={`/nodes/${node.replacesNodeId}`} className="font-medium underline">
            {node.name}
          </Link>
          , without that node&apos;s key. It gets no declaration, labels or grants of that node, and its link is refused, until an admin approves.
        </p>
        {canEdit && <ClaimActions claim={self} nodeName={node.name} onDone={refresh} />}
      </div>
    );
  }
  if (node.claims.length === 0) return null;
  return (
    <div className="space-y-2">
      {node.claims.map((claim) => (
        <div
          key={claim.id}
          role="alert"
          data-testid="replacement-claim"
          className="rounded-md border border-violet-200 bg-violet-50 p-3 text-sm text-violet-900"
        >
          <p>
            A machine claiming to be this node enrolled from <span className="font-mono">{claim.address ?? "an unknown address"}</span>{" "}
            <RelativeTime at={claim.at} />
            {claim.hostname ? (
              <>
                {" "}
                (hostname <span className="font-mono">{claim.hostname}</span>)
              </>
            ) : null}{" "}
            without this node&apos;s key. If this machine lost its state directory or was reinstalled, approve: it takes over this node and re-applies its
            declaration. If you do not recognise it, reject.{" "}
            <Link href={`/nodes/${claim.id}`} className="underline">
              Its facts
            </Link>
          </p>
          {canEdit && <ClaimActions claim={claim} nodeName={node.name} onDone={refresh} />}
        </div>
      ))}
    </div>
  );
}
