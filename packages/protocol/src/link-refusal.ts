// Why the control plane refuses a host before any link is open (the upgrade, a request signed by the
// node key): a code the host switches on, never its English, with the status it travels under
// (decision 0001). A held link is ended by a close code instead (CloseCode, frames.ts).
import { z } from "zod";

/**
 * Each refusal and its HTTP status. 401: the credential proves nothing (malformed, an unknown
 * node, a signature that is not the node's key, a spent challenge, a stale time); the two claim
 * codes say whose key it is (a replacement claim an admin has not approved, or rejected) so the
 * host's log says why. 403: the node's key signed, and the node's state refuses it. 503: come
 * back later (Retry-After).
 */
export const LINK_REFUSALS = {
  "bad-auth": 401,
  "unknown-node": 401,
  "bad-signature": 401,
  "challenge-refused": 401,
  "clock-skew": 401,
  "claim-pending": 401,
  "claim-rejected": 401,
  "node-pending": 403,
  "node-revoked": 403,
  "node-retired": 403,
  busy: 503,
  "reconnecting-too-often": 503,
  unavailable: 503,
} as const satisfies Record<string, 401 | 403 | 503>;
export type RefusalCode = keyof typeof LINK_REFUSALS;
export const RefusalCode = z.enum(Object.keys(LINK_REFUSALS) as [RefusalCode, ...RefusalCode[]]);

/** What a refusal of each code says when the refuser adds nothing. */
const DEFAULT_MESSAGE: Record<RefusalCode, string> = {
  "bad-auth": "bad auth",
  "unknown-node": "unknown node",
  "bad-signature": "bad signature",
  "challenge-refused": "challenge unknown, expired or already used",
  "clock-skew": "the request's time is too far from the control plane's clock",
  "claim-pending": "awaiting approval of this machine's claim to be the node",
  "claim-rejected": "replacement rejected: enrol this machine with a new token",
  "node-pending": "node is pending",
  "node-revoked": "node is revoked",
  "node-retired": "node is retired",
  busy: "the control plane is busy; try again later",
  "reconnecting-too-often": "this node reconnects too often; try again later",
  unavailable: "the control plane cannot check the link now; try again",
};

/** A refusal's body: the code in `error` (the shape of every HTTP refusal, HttpError), the English in `message`. */
export const LinkRefusalBody = z.object({ error: RefusalCode, message: z.string().max(1024) });
export type LinkRefusalBody = z.infer<typeof LinkRefusalBody>;

export interface LinkRefusal {
  status: (typeof LINK_REFUSALS)[RefusalCode];
  body: LinkRefusalBody;
}

/** The one way to refuse a host: its status and body, from the code (and the detail a person reads, if any). */
export function linkRefusal(code: RefusalCode, message: string = DEFAULT_MESSAGE[code]): LinkRefusal {
  return { status: LINK_REFUSALS[code], body: { error: code, message: message.slice(0, 1024) } };
}

const STATUS_TEXT = { 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable" } as const;

/** The refusal as the raw HTTP response that ends an upgrade's socket (the gateway and the test control plane both write this). */
export function refusalResponseText(refusal: LinkRefusal, retryAfterSeconds?: number): string {
  const body = JSON.stringify(refusal.body);
  const retryAfter = retryAfterSeconds === undefined ? "" : `Retry-After: ${retryAfterSeconds}\r\n`;
  const length = new TextEncoder().encode(body).length;
  return `HTTP/1.1 ${refusal.status} ${STATUS_TEXT[refusal.status]}\r\nConnection: close\r\n${retryAfter}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`;
}

/** The code of a refusal's body as a host reads it; null for any other body (an older control plane, a proxy's page, not JSON). */
export function refusalCodeOf(text: string): RefusalCode | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const known = LinkRefusalBody.safeParse(json);
  return known.success ? known.data.error : null;
}
