// POST /api/enrol: consumes a token and creates the node in one transaction, then
// compiles its first declaration from the profile it reported (invariant 4). A machine
// that is already a live node keeps it only with proof of its key; else it waits (0005).
// Enrolments run side by side: the compiler lock is shared (only role changes take it
// alone) and the token row, which every host enrolling with one token must lock, is
// consumed last, so it is held only for that statement and the commit.
import { createPublicKey } from "node:crypto";
import { and, eq, gt, inArray, isNull, lt, sql } from "drizzle-orm";
import { enrolmentTokens, nodes, notify, CHANNELS } from "@mesh/db";
import type { EnrolRequest, EnrolResponse } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { parseToken, secretMatches } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompilerShared, recompileNode } from "./recompile-node";
import { insertNodeWithFirstDeclaration } from "./first-declaration";
import { closeLink } from "./lifecycle";
import { checkReplacementProof } from "./replacement-proof";
import { contentHash } from "../compile/hash";
import { metrics } from "../metrics/metrics";
import type { DbOrTx } from "@mesh/db";

function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++) if (e.code === "23505") return true;
  return false;
}

/** The machine's live node, if any; pending claims, retired and revoked nodes are not live. */
async function findLiveNode(tx: DbOrTx, machineId: string) {
  const [node] = await tx
    .select()
    .from(nodes)
    .where(and(eq(nodes.machineId, machineId), inArray(nodes.state, ["enrolled", "disconnected", "retiring"])))
    .for("update");
  return node;
}

function assertEd25519(publicKey: string): void {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not ed25519");
  } catch {
    throw new MeshError("BAD_INPUT", "publicKey must be an Ed25519 public key (SPKI DER, base64)");
  }
}

type TokenRow = typeof enrolmentTokens.$inferSelect;

/**
 * Token rows read in the last few seconds, per database: hosts enrolling with one token read it
 * once per TOKEN_CACHE_MS, not once each. Only what never changes is trusted from here (the
 * secret's hash, labels, expiry); revocation and remaining uses are checked again, atomically,
 * by consumeToken, and a stale row can only be too permissive (uses only grow), never refuse.
 */
const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;
const tokenCache = new WeakMap<object, Map<string, { row: TokenRow; at: number }>>();

function cacheOf(deps: Deps) {
  let cache = tokenCache.get(deps.db);
  if (!cache) tokenCache.set(deps.db, (cache = new Map()));
  return cache;
}

function refusalFor(row: TokenRow, now: Date): MeshError | null {
  if (row.revokedAt) return new MeshError("TOKEN_REVOKED", "the token was revoked");
  if (row.expiresAt <= now) return new MeshError("TOKEN_EXPIRED", `the token expired at ${row.expiresAt.toISOString()}`);
  if (row.uses >= row.maxUses) return new MeshError("TOKEN_USED", "the token has already been used");
  return null;
}

async function checkToken(deps: Deps, token: string) {
  const parsed = parseToken(token);
  if (!parsed) throw new MeshError("TOKEN_MALFORMED", "the token is malformed: expected <6 chars>.<24 chars>");
  const cache = cacheOf(deps);
  const hit = cache.get(parsed.id);
  let row = hit && Date.now() - hit.at < TOKEN_CACHE_MS ? hit.row : undefined;
  if (!row) {
    [row] = await deps.db.select().from(enrolmentTokens).where(eq(enrolmentTokens.id, parsed.id));
    if (row) {
      if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
      cache.set(parsed.id, { row, at: Date.now() });
    }
  }
  if (!row || !secretMatches(parsed.secret, row.secretHash)) throw new MeshError("TOKEN_UNKNOWN", "the token is not known to this control plane");
  const refusal = refusalFor(row, nowOf(deps));
  if (refusal) throw refusal;
  return row;
}

/**
 * Consumes one use, atomically: of many concurrent enrolments only maxUses get a row back.
 * Called last in the transaction, because the row stays locked until commit. When it is
 * refused, the row is read again for the reason (revoked, expired, used up).
 */
async function consumeToken(deps: Deps, tx: DbOrTx, tokenId: string): Promise<void> {
  const now = nowOf(deps);
  const consumed = await tx
    .update(enrolmentTokens)
    .set({ uses: sql`${enrolmentTokens.uses} + 1`, lastUsedAt: now })
    .where(and(eq(enrolmentTokens.id, tokenId), isNull(enrolmentTokens.revokedAt), gt(enrolmentTokens.expiresAt, now), lt(enrolmentTokens.uses, enrolmentTokens.maxUses)))
    .returning({ id: enrolmentTokens.id });
  if (consumed.length > 0) return;
  cacheOf(deps).delete(tokenId);
  const [row] = await tx.select().from(enrolmentTokens).where(eq(enrolmentTokens.id, tokenId));
  throw (row && refusalFor(row, now)) || new MeshError("TOKEN_USED", "the token has already been used");
}

export interface EnrolMeta {
  address?: string;
  /** The caller's budget for enrol.refused (per address key); null leaves the event out (counted). Without one every refusal is written. */
  refusalEvent?: () => { suppressed: number } | null;
}

export async function enrolNode(deps: Deps, request: EnrolRequest, meta: EnrolMeta = {}): Promise<EnrolResponse> {
  const tokenId = parseToken(request.token)?.id ?? null;
  try {
    assertEd25519(request.publicKey);
    const token = await checkToken(deps, request.token);
    const node = await deps.db.transaction(async (tx) => {
      // Compiler lock before any node row, as role changes take them: no lock-order cycle.
      await lockCompilerShared(tx);
      const roles = await loadRoles(tx);
      const existing = await findLiveNode(tx, request.profile.machineId);
      const fields = {
        publicKey: request.publicKey,
        profile: request.profile,
        inventory: request.inventory,
        inventoryHash: contentHash(request.inventory),
        tokenId: token.id,
        hostVersion: request.profile.hostVersion,
        enrolledFrom: meta.address ?? null,
      };
      const actor = `token:${token.id}`;
      if (existing?.state === "retiring") {
        // Enrolment never revives a node on its way out, proof or not.
        throw new MeshError("CONFLICT", `this machine is node ${existing.name}, which is being retired; enrol again once it is retired`);
      }
      let node;
      if (existing) {
        const proof = request.replaces?.nodeId === existing.id
          ? checkReplacementProof(request.replaces, { nodeId: existing.id, oldPublicKey: existing.publicKey, newPublicKey: request.publicKey, tokenId: token.id, now: nowOf(deps) })
          : null;
        // A stale proof is most likely a wrong clock: say so rather than quietly make a claim.
        if (proof && !proof.ok && proof.kind === "stale") throw new MeshError("BAD_INPUT", `re-enrolment refused: ${proof.reason}`);
        if (!proof?.ok) {
          // Machine-id is a hint, not a credential: without proof of the old key this is
          // only a claim. A pending node holds the new key until an admin decides.
          const [pending] = await tx
            .insert(nodes)
            .values({ ...fields, name: existing.name, state: "pending", labels: token.labels, machineId: request.profile.machineId, replacesNodeId: existing.id })
            .returning();
          const data = { address: meta.address, pendingNodeId: pending!.id, proof: proof ? proof.reason : "none" };
          await recordEvent(tx, { actor, action: "node.replacement-claimed", nodeId: existing.id, target: pending!.id, data });
          await recordEvent(tx, { actor, action: "node.enrol", nodeId: pending!.id, data: { ...data, pending: true, replaces: existing.id } });
          await notify(tx, CHANNELS.node, existing.id);
          await consumeToken(deps, tx, token.id);
          return { id: existing.id, name: existing.name, labels: pending!.labels, pendingId: pending!.id };
        }
        // The host proved it holds the node's key (its store survived a reinstall, or it
        // re-ran enrol): one node, its history kept, the old key refused from now on.
        [node] = await tx
          .update(nodes)
          .set({ ...fields, labels: { ...existing.labels, ...token.labels }, state: "disconnected", gatewayId: null, updatedAt: sql`now()` })
          .where(eq(nodes.id, existing.id))
          .returning();
        await recordEvent(tx, { actor, action: "node.re-enrol", nodeId: existing.id, data: { address: meta.address, previousState: existing.state, proof: "old key" } });
        await closeLink(tx, existing.id, "replaced");
        if (!node) throw new Error("node update returned nothing");
        await recompileNode(tx, node.id, { roles, actor, grants: deps.grants });
      } else {
        node = await insertNodeWithFirstDeclaration(tx, {
          values: { ...fields, name: request.profile.hostname || request.profile.machineId.slice(0, 12), state: "disconnected", labels: token.labels, machineId: request.profile.machineId },
          roles,
          actor,
          grants: deps.grants,
          event: { actor, action: "node.enrol", data: { address: meta.address, machineId: request.profile.machineId } },
        });
      }
      await consumeToken(deps, tx, token.id);
      return { id: node.id, name: node.name, labels: node.labels, pendingId: null };
    }).catch((err) => {
      // Two enrolments of one machine at the same instant: the live-node index keeps one.
      if (isUniqueViolation(err)) throw new MeshError("CONFLICT", "this machine is enrolling concurrently; try again");
      throw err;
    });
    if (node.pendingId) {
      deps.log.warn({ nodeId: node.id, pendingNodeId: node.pendingId, tokenId: token.id, address: meta.address }, "machine claims a live node; awaiting approval");
      metrics.enrolments.inc({ result: "pending" });
      return { nodeId: node.id, name: node.name, labels: node.labels, awaitingApproval: true };
    }
    metrics.enrolments.inc({ result: "enrolled" });
    deps.log.info({ nodeId: node.id, tokenId: token.id }, "node enrolled");
    return { nodeId: node.id, name: node.name, labels: node.labels };
  } catch (err) {
    if (err instanceof MeshError) {
      metrics.enrolments.inc({ result: "refused" });
      // Anyone can be refused, so refusals (event and log line) are budgeted per address key.
      const slot = meta.refusalEvent ? meta.refusalEvent() : { suppressed: 0 };
      if (slot) {
        const data = { reason: err.code, address: meta.address, ...(slot.suppressed > 0 ? { suppressedEvents: slot.suppressed } : {}) };
        await recordEvent(deps.db, { actor: tokenId ? `token:${tokenId}` : "anonymous", action: "enrol.refused", data });
        deps.log.warn({ tokenId, reason: err.code, address: meta.address, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) }, "enrolment refused");
      }
    }
    throw err;
  }
}
