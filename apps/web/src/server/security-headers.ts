// Security headers on every response the server entry sends: a content security
// policy with a per-request script nonce (Next puts it on its own inline scripts), framing refused, and HSTS under TLS.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export interface SecurityHeaderOptions {
  dev: boolean;
  /** TLS here, or MESH_PUBLIC_URL is https (a TLS-terminating proxy in front). */
  https: boolean;
}

export function contentSecurityPolicy(nonce: string, dev: boolean): string {
  return [
    "default-src 'self'",
    // 'strict-dynamic': scripts Next's nonce'd bootstrap loads are trusted, nothing inline else.
    // Dev only: React's dev build and HMR need eval.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // Style attributes (React's style={...}) cannot carry a nonce; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Sets the headers on the response and hands the policy to Next on the request
 * (Next reads the nonce from the request's content-security-policy header).
 */
export function applySecurityHeaders(req: IncomingMessage, res: ServerResponse, opts: SecurityHeaderOptions): void {
  const nonce = randomBytes(16).toString("base64");
  const policy = contentSecurityPolicy(nonce, opts.dev);
  req.headers["content-security-policy"] = policy;
  res.setHeader("content-security-policy", policy);
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("x-content-type-options", "nosniff");
  // Not no-referrer: under it browsers send "Origin: null" on same-origin POSTs, which the CSRF check refuses.
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("permissions-policy", "camera=(), microphone=(), geolocation=()");
  if (opts.https) applyHsts(res);
}

/**
 * HSTS for a request that came over https: TLS here, MESH_PUBLIC_URL https (set above), or, decided
 * per request from the validated origin, a trusted proxy's X-Forwarded-Proto https — the same rule that
 * makes the session cookie Secure, so the two never disagree.
 */
export function applyHsts(res: ServerResponse, origin?: string): void {
  if (origin === undefined || origin.startsWith("https://")) res.setHeader("strict-transport-security", "max-age=31536000");
}
