// Logout: from our own origin only (a cross-site page must not end a session), takes no body.
import { BODY_LIMITS, clearedSessionCookie, jsonError, logout, readBody, readCookie, SESSION_COOKIE } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";
import { checkSessionRequest } from "@/server/same-origin";
import { sessionCookieSecure } from "@/server/session-cookie";

export const dynamic = "force-dynamic";

export async function POST(req: Request) {
  const deps = runtimeDeps();
  const check = checkSessionRequest(req);
  if (!check.ok) return Response.json({ error: "FORBIDDEN", message: check.message }, { status: check.status });
  try {
    await readBody(req, BODY_LIMITS.logout);
    const session = readCookie(req.headers.get("cookie"), SESSION_COOKIE);
    if (session) await logout(deps.db, session);
  } catch (err) {
    return jsonError(deps, err);
  }
  return new Response(null, { status: 303, headers: { location: "/login", "set-cookie": clearedSessionCookie(sessionCookieSecure(req)) } });
}
