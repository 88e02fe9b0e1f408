// CSRF defence for state-changing calls: a JSON body (a form cannot send one
// cross-site without a preflight) and, from a browser, an Origin equal to ours.
// An API-key caller (Authorization header) without an Origin is a script, not a browser.
import { publicUrlFor } from "./runtime";

export type OriginCheck = { ok: true } | { ok: false; status: 403 | 415; message: string };

export function checkMutationRequest(req: Request): OriginCheck {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") return { ok: false, status: 415, message: "send the body as application/json" };
  const origin = req.headers.get("origin");
  if (!origin) {
    if (req.headers.get("authorization")) return { ok: true };
    return { ok: false, status: 403, message: "a browser request needs an Origin header" };
  }
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  const allowed = new Set([publicUrlFor(req)]);
  if (host) for (const proto of ["http", "https"]) allowed.add(`${proto}://${host}`);
  if (!allowed.has(origin)) return { ok: false, status: 403, message: "cross-origin requests are refused" };
  return { ok: true };
}
