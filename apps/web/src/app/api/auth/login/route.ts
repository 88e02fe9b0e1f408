// Dashboard login: a form post (or JSON) with a user name and password; sets a
// fresh HttpOnly SameSite session cookie (the old one is dropped) and goes to the fleet.
import { loginUser, MeshError, readCookie, sessionCookie, SESSION_COOKIE } from "@mesh/api";
import { z } from "zod";
import { getRuntime, remoteAddress, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

const LoginBody = z.object({ name: z.string().max(64).optional(), password: z.string().max(1024) });

export async function POST(req: Request) {
  const deps = runtimeDeps();
  const isJson = (req.headers.get("content-type") ?? "").includes("application/json");
  let body: z.infer<typeof LoginBody>;
  try {
    const raw = isJson ? await req.json() : Object.fromEntries((await req.formData()).entries());
    body = LoginBody.parse(raw);
  } catch {
    return Response.json({ error: "BAD_INPUT", message: "send a user name and a password" }, { status: 400 });
  }
  const name = (body.name ?? "").trim() || "admin";
  try {
    const { sessionId, expiresAt } = await loginUser(deps.db, getRuntime().loginLimits, {
      name,
      password: body.password,
      address: remoteAddress(req),
      previousSessionId: readCookie(req.headers.get("cookie"), SESSION_COOKIE),
    });
    const secure = new URL(req.url).protocol === "https:" || !!getRuntime().tlsPin;
    const headers = new Headers({ "set-cookie": sessionCookie(sessionId, expiresAt, secure) });
    deps.log.info({ user: name, address: remoteAddress(req) }, "login");
    if (isJson) return Response.json({ ok: true }, { headers });
    headers.set("location", "/");
    return new Response(null, { status: 303, headers });
  } catch (err) {
    if (!(err instanceof MeshError)) throw err;
    deps.log.warn({ user: name, address: remoteAddress(req), reason: err.code }, "login refused");
    if (isJson) return Response.json(err.toJSON(), { status: err.status });
    const reason = err.code === "RATE_LIMITED" ? "limited" : "1";
    return new Response(null, { status: 303, headers: { location: `/login?error=${reason}` } });
  }
}
