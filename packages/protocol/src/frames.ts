// The link between a host and the control plane. Authentication happens at the
// HTTP upgrade: the host fetches a `challenge`, signs it, and sends the `auth`
// frame (base64url JSON) in the `x-mesh-auth` header of the upgrade request.
// After that, frames are JSON text messages on the websocket.
import { z } from "zod";
import { LIMITS } from "./limits";
import { Declaration } from "./declaration";
import { Report } from "./report";
import { Profile, Inventory } from "./profile";
import { ResourceId } from "./resources";
import { refineStorableText } from "./storable-text";

export const AGENT_PATH = "/agent";
export const CHALLENGE_PATH = "/api/agent/challenge";
export const ENROL_PATH = "/api/enrol";
export const AUTH_HEADER = "x-mesh-auth";
/**
 * On the upgrade's 101 answer: what this control plane reads beyond the first protocol, comma
 * separated. A host uses a feature only on a link whose answer named it (frames are strict objects:
 * an older control plane would refuse a frame with a field it does not know).
 */
export const FEATURES_HEADER = "x-mesh-features";
export const FEATURE = {
  /** Reports carry `origin`; acks mean stored; one sent again is not stored twice. */
  reportOrigin: "report-origin",
  /** Reports carry `storeGeneration`; acks may answer with the generation stored (a rolled back store). */
  storeGeneration: "store-generation",
} as const;
/** The header's value from a control plane that reads everything this protocol defines. */
export const EVERY_FEATURE = Object.values(FEATURE).join(", ");

/**
 * On the host's upgrade request: the server frames this host reads beyond the first protocol, comma
 * separated. The control plane sends a newer frame only on a link whose host named it (an older host's
 * ServerFrame is strict and would take the frame as bad).
 */
export const HOST_FEATURES_HEADER = "x-mesh-host-features";
export const HOST_FEATURE = {
  /** The host reads `reconcile` frames: reconcile now, correct or accept named drift. */
  reconcileNow: "reconcile-now",
} as const;
/** The header's value from a host that reads every server frame this protocol defines. */
export const EVERY_HOST_FEATURE = Object.values(HOST_FEATURE).join(", ");

/** Reads a comma-separated features header (either direction) into a set. */
export function parseFeatures(value: string | string[] | null | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(
    text
      .split(",")
      .map((f) => f.trim())
      .filter((f) => f.length > 0 && f.length <= 64),
  );
}

/** Close codes the gateway uses (4000-4999 is the application range); before a link opens, refusals (link-refusal.ts). */
export const CloseCode = {
  badFrame: 4400,
  unauthorized: 4401,
  revoked: 4403,
  replaced: 4409,
  retired: 4410,
  /** The host sent frames faster than the gateway handles them, past its bound even while paused. */
  overloaded: 4429,
  tooBig: 1009,
} as const;

export const NodeId = z.uuid();

export const ChallengeFrame = z.strictObject({
  type: z.literal("challenge"),
  nonce: z.string().min(16).max(512),
  expiresAt: z.iso.datetime(),
});
export type ChallengeFrame = z.infer<typeof ChallengeFrame>;

/** The bytes a host signs: a fixed prefix, the node id and the nonce. */
export function challengeMessage(nodeId: string, nonce: string): string {
  return `mesh-link-v1\n${nodeId}\n${nonce}`;
}

export const AuthFrame = z
  .strictObject({
    type: z.literal("auth"),
    nodeId: NodeId,
    nonce: z.string().min(16).max(512),
    /** Ed25519 signature over challengeMessage(nodeId, nonce), base64. */
    signature: z.string().min(1).max(256),
    /** The declaration version the host holds, so an unchanged one is not re-sent. */
    declarationVersion: z.number().int().min(0),
    hostVersion: z.string().max(64),
  })
  .superRefine(refineStorableText);
export type AuthFrame = z.infer<typeof AuthFrame>;

export const DeclarationFrame = z.strictObject({
  type: z.literal("declaration"),
  declaration: Declaration,
});
export type DeclarationFrame = z.infer<typeof DeclarationFrame>;

export const ReportFrame = z.strictObject({
  type: z.literal("report"),
  /** Acked once stored; an ack answers every report of this link up to its seq. */
  seq: z.number().int().min(0),
  report: Report,
});
export type ReportFrame = z.infer<typeof ReportFrame>;

export const AckFrame = z.strictObject({
  type: z.literal("ack"),
  seq: z.number().int().min(0),
  /**
   * Set when the report's storeGeneration is older than the newest this control plane stored for the
   * node: the host's store was rolled back (a restored backup), and the host handles it as lost.
   */
  storeGeneration: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});
export type AckFrame = z.infer<typeof AckFrame>;

export const ErrorFrame = z.strictObject({
  type: z.literal("error"),
  code: z.string().max(64),
  message: z.string().max(LIMITS.message),
});
export type ErrorFrame = z.infer<typeof ErrorFrame>;

/** The node is retired: the host forgets its identity and goes back to `hosted`. */
export const RetiredFrame = z.strictObject({
  type: z.literal("retired"),
  nodeId: NodeId,
});
export type RetiredFrame = z.infer<typeof RetiredFrame>;

/** The host's profile and inventory, sent on connect when their hash changed since last sent. */
export const FactsFrame = z.strictObject({
  type: z.literal("facts"),
  profile: Profile,
  inventory: Inventory,
});
export type FactsFrame = z.infer<typeof FactsFrame>;

/**
 * Reconcile now (sent only to hosts that name HOST_FEATURE.reconcileNow). The host runs one reconcile of
 * its current declaration as soon as it can (coalesced with one already queued; never a second reconciler)
 * and reports as after any reconcile. `correct` names `onDrift: report` resources whose drift this
 * reconcile corrects once, as if they were `onDrift: correct`; `accept` names resources whose drift as
 * observed now is accepted: the host stops reporting that drift until the resource changes again or the
 * declaration changes it. Ids the declaration does not hold are ignored (and named in the report's errors).
 */
export const ReconcileFrame = z.strictObject({
  type: z.literal("reconcile"),
  /** Who asked, for the host's log: e.g. "node.reconcile by admin@example.com". */
  reason: z.string().max(200).optional(),
  correct: z.array(ResourceId).max(LIMITS.resources).optional(),
  accept: z.array(ResourceId).max(LIMITS.resources).optional(),
});
export type ReconcileFrame = z.infer<typeof ReconcileFrame>;

/** Frames the control plane sends to a host. */
export const ServerFrame = z.discriminatedUnion("type", [DeclarationFrame, AckFrame, ErrorFrame, RetiredFrame, ReconcileFrame]);
export type ServerFrame = z.infer<typeof ServerFrame>;

/** Frames a host sends to the control plane. */
// Storable text as a whole (no NUL, no lone surrogate): what a host sends reaches Postgres.
export const HostFrame = z.discriminatedUnion("type", [ReportFrame, ErrorFrame, FactsFrame]).superRefine(refineStorableText);
export type HostFrame = z.infer<typeof HostFrame>;
