// POST /api/enrol: consumes a token and creates the node in one transaction, then
// compiles its first declaration from the profile it reported (invariant 4).
import { createPublicKey } from "node:crypto";
import { and, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { enrolmentTokens, nodes } from "@mesh/db";
import type { EnrolRequest, EnrolResponse } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { parseToken, secretMatches } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompiler, recompileNode } from "./recompile-node";

function assertEd25519(publicKey: string): void {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not ed25519");
  } catch {
    throw new MeshError("BAD_INPUT", "publicKey must be an Ed25519 public key (SPKI DER, base64)");
  }
}

async function checkToken(deps: Deps, token: string) {
  const parsed = parseToken(token);
  if (!parsed) throw new MeshError("TOKEN_MALFORMED", "the token is malformed: expected <6 chars>.<24 chars>");
  const [row] = await deps.db.select().from(enrolmentTokens).where(eq(enrolmentTokens.id, parsed.id));
  if (!row || !secretMatches(parsed.secret, row.secretHash)) throw new MeshError("TOKEN_UNKNOWN", "the token is not known to this control plane");
  if (row.revokedAt) throw new MeshError("TOKEN_REVOKED", "the token was revoked");
  if (row.expiresAt <= nowOf(deps)) throw new MeshError("TOKEN_EXPIRED", `the token expired at ${row.expiresAt.toISOString()}`);
  if (row.uses >= row.maxUses) throw new MeshError("TOKEN_USED", "the token has already been used");
  return row;
}

export async function enrolNode(deps: Deps, request: EnrolRequest, meta: { address?: string } = {}): Promise<EnrolResponse> {
  const tokenId = parseToken(request.token)?.id ?? null;
  try {
    assertEd25519(request.publicKey);
    const token = await checkToken(deps, request.token);
    const node = await deps.db.transaction(async (tx) => {
      // Consume atomically: of many concurrent enrolments only maxUses get a row back.
      const consumed = await tx
        .update(enrolmentTokens)
        .set({ uses: sql`${enrolmentTokens.uses} + 1`, lastUsedAt: nowOf(deps) })
        .where(
          and(
            eq(enrolmentTokens.id, token.id),
            isNull(enrolmentTokens.revokedAt),
            gt(enrolmentTokens.expiresAt, nowOf(deps)),
            lt(enrolmentTokens.uses, enrolmentTokens.maxUses),
          ),
        )
        .returning({ id: enrolmentTokens.id });
      if (consumed.length === 0) throw new MeshError("TOKEN_USED", "the token has already been used");
      const [created] = await tx
        .insert(nodes)
        .values({
          name: request.profile.hostname || request.profile.machineId.slice(0, 12),
          state: "disconnected",
          labels: token.labels,
          publicKey: request.publicKey,
          machineId: request.profile.machineId,
          profile: request.profile,
          inventory: request.inventory,
          tokenId: token.id,
          hostVersion: request.profile.hostVersion,
        })
        .returning();
      if (!created) throw new Error("node insert returned nothing");
      await recordEvent(tx, { actor: `token:${token.id}`, action: "node.enrol", nodeId: created.id, data: { address: meta.address, machineId: request.profile.machineId } });
      await lockCompiler(tx);
      await recompileNode(tx, created.id, await loadRoles(tx), `token:${token.id}`);
      return created;
    });
    deps.log.info({ nodeId: node.id, tokenId: token.id }, "node enrolled");
    return { nodeId: node.id, name: node.name, labels: node.labels };
  } catch (err) {
    if (err instanceof MeshError) {
      await recordEvent(deps.db, { actor: tokenId ? `token:${tokenId}` : "anonymous", action: "enrol.refused", data: { reason: err.code, address: meta.address } });
      deps.log.warn({ tokenId, reason: err.code, address: meta.address }, "enrolment refused");
    }
    throw err;
  }
}
