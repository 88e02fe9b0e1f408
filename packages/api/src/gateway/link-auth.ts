// Authentication at the HTTP upgrade: the auth frame in the x-mesh-auth header,
// a nonce this control plane issued (used once fleet-wide), and an Ed25519 signature by the node's key.
import type { IncomingMessage } from "node:http";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { nodes, type DbOrTx } from "@mesh/db";
import { AUTH_HEADER, AuthFrame, challengeMessage, describeZodError, linkRefusal, type LinkRefusal } from "@mesh/protocol";
import type { ChallengeIssuer } from "./challenge";
import { KeyBatcher } from "../batching/key-batcher";
import { signedByNodeKey } from "../auth/node-key";

interface LinkNode {
  id: string;
  name: string;
  state: string;
  publicKey: string;
}

/** Looks up the nodes of handshakes arriving together in one query (a fleet re-linking after a restart). */
export type NodeLookup = (nodeId: string) => Promise<LinkNode | undefined>;

export function batchedNodeLookup(db: DbOrTx): NodeLookup {
  const batcher = new KeyBatcher<string, LinkNode>(async (ids) => {
    const rows = await db
      .select({ id: nodes.id, name: nodes.name, state: nodes.state, publicKey: nodes.publicKey })
      .from(nodes)
      .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`);
    return new Map(rows.map((r) => [r.id, r]));
  });
  return (nodeId) => batcher.load(nodeId);
}

export type LinkAuthResult = { ok: true; auth: AuthFrame; node: { id: string; name: string; publicKey: string } } | { ok: false; refusal: LinkRefusal };

/** States whose key links nowhere: refused at the handshake (403 with the state's code), and a held link is closed. */
export const REFUSED_STATES = { pending: "node-pending", revoked: "node-revoked", retired: "node-retired" } as const;

/** The refusal a node in this state gets, or null when its state links. */
export function stateRefusal(state: string): LinkRefusal | null {
  return Object.hasOwn(REFUSED_STATES, state) ? linkRefusal(REFUSED_STATES[state as keyof typeof REFUSED_STATES]) : null;
}

const signedBy = (publicKey: string, auth: AuthFrame) => signedByNodeKey(publicKey, challengeMessage(auth.nodeId, auth.nonce), auth.signature);

/**
 * A host whose enrolment claimed this node without proof of its key signs as the node
 * with a key that is still only a claim: tell it why, so its operator knows to ask an admin.
 */
async function claimRefusal(db: DbOrTx, auth: AuthFrame): Promise<LinkRefusal | null> {
  const claims = await db
    .select({ state: nodes.state, publicKey: nodes.publicKey })
    .from(nodes)
    .where(and(eq(nodes.replacesNodeId, auth.nodeId), inArray(nodes.state, ["pending", "revoked"])))
    .orderBy(desc(nodes.createdAt))
    .limit(10);
  const claim = claims.find((c) => signedBy(c.publicKey, auth));
  if (!claim) return null;
  return claim.state === "pending"
    ? linkRefusal(
        "claim-pending",
        "awaiting approval: this machine enrolled as a replacement for the node without proof of its key; an admin must approve it on the node's page in the dashboard",
      )
    : linkRefusal("claim-rejected", "replacement rejected: an admin rejected this machine's claim to be the node; enrol it with a new token");
}

export type ParsedAuth = { ok: true; auth: AuthFrame } | { ok: false; refusal: LinkRefusal };

const badAuth = (message: string): ParsedAuth => ({ ok: false, refusal: linkRefusal("bad-auth", message) });

/** The auth frame from the upgrade's header: parsing only (no signature, no query), so cheap enough to do before admission. */
export function parseAuthHeader(req: IncomingMessage): ParsedAuth {
  const header = req.headers[AUTH_HEADER];
  if (typeof header !== "string" || header.length === 0) return badAuth(`missing ${AUTH_HEADER} header`);
  if (header.length > 4096) return badAuth(`${AUTH_HEADER} header too long`);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(header, "base64url").toString("utf8"));
  } catch {
    return badAuth(`${AUTH_HEADER} is not base64url JSON`);
  }
  const parsed = AuthFrame.safeParse(json);
  if (!parsed.success) return badAuth(`bad auth frame: ${describeZodError(parsed.error)}`);
  return { ok: true, auth: parsed.data };
}

export async function authenticateLink(
  db: DbOrTx,
  challenges: ChallengeIssuer,
  req: IncomingMessage,
  lookup: NodeLookup = batchedNodeLookup(db),
  parsed: ParsedAuth = parseAuthHeader(req),
): Promise<LinkAuthResult> {
  if (!parsed.ok) return parsed;
  const auth = parsed.auth;
  const node = await lookup(auth.nodeId);
  if (!node) return { ok: false, refusal: linkRefusal("unknown-node") };
  if (!signedBy(node.publicKey, auth)) return { ok: false, refusal: (await claimRefusal(db, auth)) ?? linkRefusal("bad-signature") };
  // Checked after the signature so a stranger cannot burn a node's nonce.
  if (!(await challenges.accept(auth.nonce))) return { ok: false, refusal: linkRefusal("challenge-refused") };
  const refused = stateRefusal(node.state);
  if (refused) return { ok: false, refusal: refused };
  return { ok: true, auth, node: { id: node.id, name: node.name, publicKey: node.publicKey } };
}
