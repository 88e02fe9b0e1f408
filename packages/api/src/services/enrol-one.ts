// One enrolment in its own transaction: the general path, for what a batch does not take
// (a machine that is already a live node: re-enrolment with proof, a replacement claim; a first
// declaration declaring grants) and for every enrolment of a batch that failed (enrol-batch.ts).
// A machine that is already a live node keeps it only with proof of its key; else it waits (0005).
import { and, eq, inArray, sql } from "drizzle-orm";
import { nodes, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import type { EnrolRequest } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompilerShared, recompileNode } from "./recompile-node";
import { insertNodeWithFirstDeclaration } from "./first-declaration";
import { closeLink } from "./lifecycle";
import { checkReplacementProof } from "./replacement-proof";
import { consumeToken, type TokenRow } from "./enrolment-token-use";
import { contentHash } from "../compile/hash";

export interface EnrolMeta {
  address?: string;
  /** The caller's budget for enrol.refused (per address key); null leaves the event out (counted). Without one every refusal is written. */
  refusalEvent?: () => { suppressed: number } | null;
}

/** What an enrolment made: the node (or, for a replacement claim, the live node and the pending one). */
export interface EnrolledNode {
  id: string;
  name: string;
  labels: Record<string, string>;
  pendingId: string | null;
}

export function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++) if (e.code === "23505") return true;
  return false;
}

/** The states in which a node is its machine's live node; pending claims, retired and revoked nodes are not live. */
export const LIVE_STATES = ["enrolled", "disconnected", "retiring"] as const;

/** The machine's live node, if any. */
async function findLiveNode(tx: DbOrTx, machineId: string) {
  const [node] = await tx
    .select()
    .from(nodes)
    .where(and(eq(nodes.machineId, machineId), inArray(nodes.state, [...LIVE_STATES])))
    .for("update");
  return node;
}

/** The fields of a node an enrolment sets, whichever path it takes. */
export function enrolledFields(request: EnrolRequest, meta: EnrolMeta, token: TokenRow) {
  return {
    publicKey: request.publicKey,
    profile: request.profile,
    inventory: request.inventory,
    inventoryHash: contentHash(request.inventory),
    tokenId: token.id,
    hostVersion: request.profile.hostVersion,
    enrolledFrom: meta.address ?? null,
  };
}

/** A new node's name: the hostname it enrolled with, else the start of its machine-id. */
export function newNodeName(request: EnrolRequest): string {
  return request.profile.hostname || request.profile.machineId.slice(0, 12);
}

/** The token was checked by the caller (enrolment-token-use.ts); its use is consumed here, last. */
export async function enrolOne(deps: Deps, request: EnrolRequest, meta: EnrolMeta, token: TokenRow): Promise<EnrolledNode> {
  return deps.db
    .transaction(async (tx) => {
      // Compiler lock before any node row, as role changes take them: no lock-order cycle.
      await lockCompilerShared(tx);
      const roles = await loadRoles(tx);
      const existing = await findLiveNode(tx, request.profile.machineId);
      const fields = enrolledFields(request, meta, token);
      const actor = `token:${token.id}`;
      if (existing?.state === "retiring") {
        // Enrolment never revives a node on its way out, proof or not.
        throw new MeshError("CONFLICT", `this machine is node ${existing.name}, which is being retired; enrol again once it is retired`);
      }
      let node;
      if (existing) {
        const proof =
          request.replaces?.nodeId === existing.id
            ? checkReplacementProof(request.replaces, {
                nodeId: existing.id,
                oldPublicKey: existing.publicKey,
                newPublicKey: request.publicKey,
                tokenId: token.id,
                now: nowOf(deps),
              })
            : null;
        // A stale proof is most likely a wrong clock: say so rather than quietly make a claim.
        if (proof && !proof.ok && proof.kind === "stale") throw new MeshError("BAD_INPUT", `re-enrolment refused: ${proof.reason}`);
        if (!proof?.ok) {
          // Machine-id is a hint, not a credential: without proof of the old key this is
          // only a claim. A pending node holds the new key until an admin decides.
          const [pending] = await tx
            .insert(nodes)
            .values({
              ...fields,
              name: existing.name,
              state: "pending",
              labels: token.labels,
              machineId: request.profile.machineId,
              replacesNodeId: existing.id,
            })
            .returning();
          const data = { address: meta.address, pendingNodeId: pending!.id, proof: proof ? proof.reason : "none" };
          await recordEvent(tx, { actor, action: "node.replacement-claimed", nodeId: existing.id, target: pending!.id, data });
          await recordEvent(tx, { actor, action: "node.enrol", nodeId: pending!.id, data: { ...data, pending: true, replaces: existing.id } });
          await notify(tx, CHANNELS.node, existing.id);
          await consumeToken(deps.db, tx, token.id, nowOf(deps));
          return { id: existing.id, name: existing.name, labels: pending!.labels, pendingId: pending!.id };
        }
        // The host proved it holds the node's key (its store survived a reinstall, or it
        // re-ran enrol): one node, its history kept, the old key refused from now on.
        [node] = await tx
          .update(nodes)
          .set({ ...fields, labels: { ...existing.labels, ...token.labels }, state: "disconnected", gatewayId: null, updatedAt: sql`now()` })
          .where(eq(nodes.id, existing.id))
          .returning();
        await recordEvent(tx, {
          actor,
          action: "node.re-enrol",
          nodeId: existing.id,
          data: { address: meta.address, previousState: existing.state, proof: "old key" },
        });
        await closeLink(tx, existing.id, "replaced");
        if (!node) throw new Error("node update returned nothing");
        await recompileNode(tx, node.id, { roles, actor, grants: deps.grants });
      } else {
        node = await insertNodeWithFirstDeclaration(tx, {
          values: { ...fields, name: newNodeName(request), state: "disconnected", labels: token.labels, machineId: request.profile.machineId },
          roles,
          actor,
          grants: deps.grants,
          event: { actor, action: "node.enrol", data: { address: meta.address, machineId: request.profile.machineId } },
        });
      }
      await consumeToken(deps.db, tx, token.id, nowOf(deps));
      return { id: node.id, name: node.name, labels: node.labels, pendingId: null };
    })
    .catch((err) => {
      // Two enrolments of one machine at the same instant: the live-node index keeps one.
      if (isUniqueViolation(err)) throw new MeshError("CONFLICT", "this machine is enrolling concurrently; try again");
      throw err;
    });
}
