// Authenticates an HTTP call made by a host with its node key (never the token):
// a signature over method, path, time and body hash; revoked, retired or pending nodes
// and stale times are refused with the refusal's code, as the gateway refuses a link.
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { nodes, type DbOrTx } from "@mesh/db";
import { HTTP_SIGNATURE_HEADERS as H, HTTP_SIGNATURE_SKEW_MS, httpSignatureMessage, linkRefusal, NodeId } from "@mesh/protocol";
import { NodeRefused } from "../errors";
import { signedByNodeKey } from "../auth/node-key";
import { stateRefusal } from "../gateway/link-auth";

export async function authenticateNodeRequest(db: DbOrTx, request: Request, body: Buffer = Buffer.alloc(0), now = Date.now()): Promise<{ nodeId: string }> {
  const nodeId = request.headers.get(H.node);
  const time = request.headers.get(H.time);
  const signature = request.headers.get(H.signature);
  if (!nodeId || !time || !signature) throw new NodeRefused(linkRefusal("bad-auth", `sign the request: ${H.node}, ${H.time} and ${H.signature} headers`));
  if (!NodeId.safeParse(nodeId).success || signature.length > 256) throw new NodeRefused(linkRefusal("bad-auth", "malformed signature headers"));
  const at = Date.parse(time);
  if (!Number.isFinite(at) || Math.abs(now - at) > HTTP_SIGNATURE_SKEW_MS) throw new NodeRefused(linkRefusal("clock-skew"));
  const [node] = await db.select({ state: nodes.state, publicKey: nodes.publicKey }).from(nodes).where(eq(nodes.id, nodeId));
  if (!node) throw new NodeRefused(linkRefusal("unknown-node"));
  const url = new URL(request.url);
  const message = httpSignatureMessage(request.method, url.pathname + url.search, time, createHash("sha256").update(body).digest("hex"));
  const ok = signedByNodeKey(node.publicKey, message, signature);
  if (!ok) throw new NodeRefused(linkRefusal("bad-signature"));
  const refused = stateRefusal(node.state);
  if (refused) throw new NodeRefused(refused);
  return { nodeId };
}
