// The node identity written at enrolment: who this node is, where its control
// plane is, and the Ed25519 private key (PEM, 0600) that proves it.
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { z } from "zod";
import { Labels, NodeId } from "@mesh/protocol";
import type { Store } from "../store/store";
import { KEYS } from "./keys";
import { Trust } from "../link/trust";

export const Identity = z.strictObject({
  nodeId: NodeId,
  name: z.string().max(128),
  labels: Labels,
  controlPlaneUrl: z.url({ protocol: /^https?$/ }),
  /** SPKI DER base64, as sent at enrolment; checked against the key file on load. */
  publicKey: z.string().min(40).max(256),
  enrolledAt: z.iso.datetime(),
  /** How the control plane's TLS is trusted; an identity from before pins were kept is insecure. */
  trust: Trust.default({ kind: "insecure" }),
  /** The control plane holds this key only as a claim on the node until an admin approves it. */
  awaitingApproval: z.boolean().optional(),
});
export type Identity = z.infer<typeof Identity>;

export type LoadedIdentity =
  | { kind: "none" }
  /** identity: the identity file, when it is the key beside it that is damaged. */
  | { kind: "bad"; reason: string; identity?: Identity }
  | { kind: "ok"; identity: Identity; privateKey: KeyObject };

export async function loadIdentity(store: Store): Promise<LoadedIdentity> {
  const raw = await store.read(KEYS.identity);
  if (!raw) return { kind: "none" };
  let identity: Identity;
  try {
    const parsed = Identity.safeParse(JSON.parse(raw.toString("utf8")));
    if (!parsed.success) return { kind: "bad", reason: `${KEYS.identity} is not a valid identity` };
    identity = parsed.data;
  } catch {
    return { kind: "bad", reason: `${KEYS.identity} is not JSON` };
  }
  const pem = await store.read(KEYS.privateKey);
  if (!pem) return { kind: "bad", reason: `${KEYS.privateKey} is missing`, identity };
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    return { kind: "bad", reason: `${KEYS.privateKey} is not a private key`, identity };
  }
  if (privateKey.asymmetricKeyType !== "ed25519") return { kind: "bad", reason: `${KEYS.privateKey} is not an Ed25519 key`, identity };
  const publicKey = createPublicKey(privateKey).export({ type: "spki", format: "der" }).toString("base64");
  if (publicKey !== identity.publicKey) {
    return { kind: "bad", reason: `${KEYS.privateKey} does not match the public key enrolled in ${KEYS.identity}`, identity };
  }
  return { kind: "ok", identity, privateKey };
}

/** The key goes first: an identity on disk always has its key beside it. */
export async function saveIdentity(store: Store, identity: Identity, privateKeyPem: string): Promise<void> {
  await store.write(KEYS.privateKey, privateKeyPem, { mode: 0o600 });
  await store.write(KEYS.identity, JSON.stringify(identity, null, 1) + "\n", { mode: 0o600 });
}

/** The link was accepted: the key is the node's now, and a later re-enrolment may prove it. */
export async function saveApproved(store: Store, identity: Identity): Promise<Identity> {
  const { awaitingApproval: _awaiting, ...approved } = identity;
  await store.write(KEYS.identity, JSON.stringify(approved, null, 1) + "\n", { mode: 0o600 });
  return approved;
}
