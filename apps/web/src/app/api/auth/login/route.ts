// Dashboard login: a form post (or JSON) with a user name and password, from our own
// origin; sets a fresh HttpOnly SameSite session cookie (the old one is dropped) and goes to the fleet.
import { addressKey, BODY_LIMITS, jsonError, loginUser, MeshError, parseJsonText, readBody, readCookie, sessionCookie, SESSION_COOKIE } from "@mesh/api";
import { describeUnstorableText, findUnstorableText } from "@mesh/protocol";
import { z } from "zod";
import { getRuntime, remoteAddress, runtimeDeps } from "@/server/runtime";
import { checkSessionRequest } from "@/server/same-origin";
import { sessionCookieSecure } from "@/server/session-cookie";

export const dynamic = "force-dynamic";

const LoginBody = z.object({ name: z.string().max(64).optional(), password: z.string().max(1024) });

async function readLoginBody(req: Request, isJson: boolean): Promise<z.infer<typeof LoginBody>> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!isJson && type !== "application/x-www-form-urlencoded")
    throw new MeshError("UNSUPPORTED_MEDIA_TYPE", "send the login as application/json or a form (application/x-www-form-urlencoded)");
  const text = (await readBody(req, BODY_LIMITS.login)).toString("utf8");
  const raw = isJson ? parseJsonText(text) : Object.fromEntries(new URLSearchParams(text));
  const unstorable = findUnstorableText(raw);
  if (unstorable) throw new MeshError("BAD_INPUT", describeUnstorableText(unstorable));
  const parsed = LoginBody.safeParse(raw);
  if (!parsed.success) throw new MeshError("BAD_INPUT", "send a user name and a password");
  return parsed.data;
}

export async function POST(req: Request) {
  const deps = runtimeDeps();
  const check = checkSessionRequest(req);
  if (!check.ok) return Response.json({ error: "FORBIDDEN", message: check.message }, { status: check.status });
  const isJson = (req.headers.get("content-type") ?? "").includes("application/json");
  let body: z.infer<typeof LoginBody>;
  try {
    body = await readLoginBody(req, isJson);
  } catch (err) {
    return jsonError(deps, err);
  }
  const name = (body.name ?? "").trim() || "admin";
  try {
    const { sessionId, expiresAt } = await loginUser(deps.db, getRuntime().loginLimits, {
      name,
      password: body.password,
      address: remoteAddress(req),
      previousSessionId: readCookie(req.headers.get("cookie"), SESSION_COOKIE),
    });
    const headers = new Headers({ "set-cookie": sessionCookie(sessionId, expiresAt, sessionCookieSecure(req)) });
    deps.log.info({ user: name, address: remoteAddress(req) }, "login");
    if (isJson) return Response.json({ ok: true }, { headers });
    headers.set("location", "/");
    return new Response(null, { status: 303, headers });
  } catch (err) {
    if (!(err instanceof MeshError)) return jsonError(deps, err);
    // Within a budget per address: past it the refusals are counted and the next line says how many.
    const slot = getRuntime().loginLimits.refusedLog.take(addressKey(remoteAddress(req)));
    if (slot)
      deps.log.warn(
        { user: name, address: remoteAddress(req), reason: err.code, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) },
        "login refused",
      );
    if (isJson) return Response.json(err.toJSON(), { status: err.status });
    const reason = err.code === "RATE_LIMITED" ? "limited" : "1";
    return new Response(null, { status: 303, headers: { location: `/login?error=${reason}` } });
  }
}
