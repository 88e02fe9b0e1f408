// CSRF defence for state-changing calls: a JSON body (a form cannot send one
// cross-site without a preflight) and, from a browser, an Origin equal to ours.
// An API-key caller (Authorization header) without an Origin is a script, not a browser.
import { getRuntime, ORIGIN_HEADER } from "./runtime";

export type OriginCheck = { ok: true } | { ok: false; status: 403 | 415; message: string };

/** Ours: MESH_PUBLIC_URL and the validated origin the request came to (never a raw Host or X-Forwarded-Host). */
function isOurOrigin(req: Request, origin: string): boolean {
  const ours = [getRuntime().config.publicUrl, req.headers.get(ORIGIN_HEADER)];
  return ours.some((o) => !!o && o.toLowerCase() === origin.toLowerCase());
}

/** contentType: what the body must be (JSON for tRPC; uploads are octet-stream, which a cross-site form cannot send either). */
export function checkMutationRequest(req: Request, contentType = "application/json"): OriginCheck {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== contentType) return { ok: false, status: 415, message: `send the body as ${contentType}` };
  const origin = req.headers.get("origin");
  if (!origin) {
    if (req.headers.get("authorization")) return { ok: true };
    return { ok: false, status: 403, message: "a browser request needs an Origin header" };
  }
  if (!isOurOrigin(req, origin)) return { ok: false, status: 403, message: "cross-origin requests are refused" };
  return { ok: true };
}

/**
 * Login and logout take form posts too, so the Origin is the whole defence: a browser
 * always sends one on a POST (and Sec-Fetch-Site with it); a request with neither is a
 * script holding the password itself, which a cross-site page cannot be.
 */
export function checkSessionRequest(req: Request): OriginCheck {
  const origin = req.headers.get("origin");
  if (origin) return isOurOrigin(req, origin) ? { ok: true } : { ok: false, status: 403, message: "cross-origin requests are refused" };
  const site = req.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") return { ok: false, status: 403, message: "cross-origin requests are refused" };
  return { ok: true };
}
