// POST /api/enrol: consumes a token and creates the node in one transaction, then
// compiles its first declaration from the profile it reported (invariant 4). A machine
// that is already a live node keeps it only with proof of its key; else it waits (0005).
// Enrolments arriving together share one transaction (group commit, enrol-batch.ts): a
// batch is as large as what arrived while the previous ones ran, so one host alone waits
// for nothing and a burst costs a few statements per batch, not ~11 per host.
import { createPublicKey } from "node:crypto";
import type { EnrolRequest, EnrolResponse } from "@mesh/protocol";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { KeyBatcher } from "../batching/key-batcher";
import { parseToken } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { enrolBatch, type EnrolItem, type EnrolOutcome } from "./enrol-batch";
import type { EnrolMeta } from "./enrol-one";
import { metrics } from "../metrics/metrics";

export type { EnrolMeta } from "./enrol-one";

function assertEd25519(publicKey: string): void {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not ed25519");
  } catch {
    throw new MeshError("BAD_INPUT", "publicKey must be an Ed25519 public key (SPKI DER, base64)");
  }
}

/**
 * One batcher per database. No window: an enrolment leaves at once when a flight is free, and
 * those arriving while both flights run go together in the next (KeyBatcher's bounded flights).
 * Each request is its own key, so nothing is shared between two requests but the transaction.
 */
const BATCH_MAX = 200;
const batchers = new WeakMap<object, KeyBatcher<EnrolItem, EnrolOutcome>>();

function batcherOf(deps: Deps): KeyBatcher<EnrolItem, EnrolOutcome> {
  let batcher = batchers.get(deps.db);
  if (!batcher) batchers.set(deps.db, (batcher = new KeyBatcher(enrolBatch, { windowMs: 0, maxKeys: BATCH_MAX, maxInFlight: 2 })));
  return batcher;
}

export async function enrolNode(deps: Deps, request: EnrolRequest, meta: EnrolMeta = {}): Promise<EnrolResponse> {
  const parsedToken = parseToken(request.token);
  const tokenId = parsedToken?.id ?? null;
  try {
    assertEd25519(request.publicKey);
    if (!parsedToken) throw new MeshError("TOKEN_MALFORMED", "the token is malformed: expected <6 chars>.<24 chars>");
    const outcome = await batcherOf(deps).load({ deps, request, meta, tokenId: parsedToken.id, secret: parsedToken.secret });
    if (!outcome) throw new Error("the enrolment batch gave no answer");
    if ("error" in outcome) throw outcome.error;
    const node = outcome.node;
    if (node.pendingId) {
      deps.log.warn({ nodeId: node.id, pendingNodeId: node.pendingId, tokenId, address: meta.address }, "machine claims a live node; awaiting approval");
      metrics.enrolments.inc({ result: "pending" });
      return { nodeId: node.id, name: node.name, labels: node.labels, awaitingApproval: true };
    }
    metrics.enrolments.inc({ result: "enrolled" });
    deps.log.info({ nodeId: node.id, tokenId }, "node enrolled");
    return { nodeId: node.id, name: node.name, labels: node.labels };
  } catch (err) {
    if (err instanceof MeshError) {
      metrics.enrolments.inc({ result: "refused" });
      // Anyone can be refused, so refusals (event and log line) are budgeted per address key.
      const slot = meta.refusalEvent ? meta.refusalEvent() : { suppressed: 0 };
      if (slot) {
        const data = { reason: err.code, address: meta.address, ...(slot.suppressed > 0 ? { suppressedEvents: slot.suppressed } : {}) };
        await recordEvent(deps.db, { actor: tokenId ? `token:${tokenId}` : "anonymous", action: "enrol.refused", data });
        deps.log.warn(
          { tokenId, reason: err.code, address: meta.address, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) },
          "enrolment refused",
        );
      }
    }
    throw err;
  }
}
