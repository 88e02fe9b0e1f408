// POST /api/enrol: a token, the host's public key, its profile and inventory.
import { z } from "zod";
import { Profile, Inventory } from "./profile";
import { NodeId } from "./frames";
import { Labels } from "./labels";
import { ReplacementProof } from "./enrol-replacement";

export const EnrolRequest = z.strictObject({
  token: z.string().min(1).max(256),
  /** Ed25519 public key, SPKI DER, base64. */
  publicKey: z.string().min(40).max(256),
  profile: Profile,
  inventory: Inventory,
  /** Sent by a host that still has its old key: lets it keep its node without an admin's approval. */
  replaces: ReplacementProof.optional(),
});
export type EnrolRequest = z.infer<typeof EnrolRequest>;

export const EnrolResponse = z.strictObject({
  nodeId: NodeId,
  name: z.string().max(128),
  labels: Labels,
  /**
   * Present when this machine is already a node and the host could not prove it holds
   * that node's key: the new key waits for an admin's approval and links are refused until then.
   */
  awaitingApproval: z.literal(true).optional(),
});
export type EnrolResponse = z.infer<typeof EnrolResponse>;

/** Every refusal of the control plane's HTTP endpoints has this shape. */
export const HttpError = z.strictObject({
  error: z.string().max(64),
  message: z.string().max(1024),
});
export type HttpError = z.infer<typeof HttpError>;
