// Link authentication: fetch a challenge, sign it with the node's Ed25519 key,
// and carry the signed auth frame in the upgrade request's header.
import { sign, type KeyObject } from "node:crypto";
import { type AuthFrame, ChallengeFrame, CHALLENGE_PATH, HttpError, challengeMessage, refusalCodeOf, type RefusalCode, describeZodError } from "@mesh/protocol";
import { controlPlaneRequest } from "./control-plane-http";
import { notMeshAnswer } from "./not-mesh";
import type { Trust } from "./trust";

/** `path` under the control plane's base URL (which may carry a path prefix). */
export function endpoint(base: string, path: string, scheme?: "ws"): string {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/+$/, "") + path;
  url.search = "";
  url.hash = "";
  if (scheme === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

/** A server's Retry-After is honoured up to this (a bad or hostile value cannot park a host for days). */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/** Retry-After in seconds (the only form the control plane sends), in ms, capped; undefined when absent or not a number. */
export function retryAfterMs(header: string | string[] | null | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value || !/^\d{1,9}$/.test(value.trim())) return undefined;
  return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

export class LinkRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The server asked us to wait this long before trying again. */
    readonly retryAfterMs?: number,
    /** Why, as a code the host acts on (link-refusal.ts); null when the body carries none (an older control plane, a proxy). */
    readonly code: RefusalCode | null = null,
  ) {
    super(message);
    this.name = "LinkRefused";
  }
}

export async function fetchChallenge(base: string, trust: Trust | undefined, signal?: AbortSignal): Promise<ChallengeFrame> {
  const res = await controlPlaneRequest(endpoint(base, CHALLENGE_PATH), {
    headers: { accept: "application/json" },
    trust,
    timeoutMs: 15_000,
    signal,
    maxBytes: 64 * 1024,
  });
  const text = res.text();
  const notMesh = notMeshAnswer(base, CHALLENGE_PATH, res.status, text);
  if (notMesh) throw new LinkRefused(res.status, notMesh);
  // A control plane admitting links at its rate answers the challenge 503 with the host's turn (Retry-After).
  if (res.status < 200 || res.status > 299)
    throw new LinkRefused(res.status, `challenge refused: ${httpReason(res.status, text)}`, retryAfterMs(res.headers["retry-after"]), refusalCodeOf(text));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error("challenge: the response is not JSON");
  }
  const parsed = ChallengeFrame.safeParse(body);
  if (!parsed.success) throw new Error(`challenge: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export function signChallenge(opts: { nodeId: string; nonce: string; privateKey: KeyObject; declarationVersion: number; hostVersion: string }): AuthFrame {
  const signature = sign(null, Buffer.from(challengeMessage(opts.nodeId, opts.nonce)), opts.privateKey).toString("base64");
  return {
    type: "auth",
    nodeId: opts.nodeId,
    nonce: opts.nonce,
    signature,
    declarationVersion: opts.declarationVersion,
    hostVersion: opts.hostVersion.slice(0, 64),
  };
}

export function authHeaderValue(frame: AuthFrame): string {
  return Buffer.from(JSON.stringify(frame)).toString("base64url");
}

/** The control plane's reason from an HttpError body, else the status. */
export function httpReason(status: number, body: string): string {
  try {
    const parsed = HttpError.safeParse(JSON.parse(body));
    if (parsed.success) return parsed.data.message;
  } catch {
    // not JSON: say the status
  }
  return `HTTP ${status}`;
}
