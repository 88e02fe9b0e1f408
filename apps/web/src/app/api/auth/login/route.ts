// Dashboard login: a form post (or JSON) with the admin password; sets the
// HttpOnly session cookie and sends the browser to the fleet.
import { login, MeshError, sessionCookie } from "@mesh/api";
import { remoteAddress, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export async function POST(req: Request) {
  const deps = runtimeDeps();
  const isJson = (req.headers.get("content-type") ?? "").includes("application/json");
  let password = "";
  try {
    if (isJson) password = String(((await req.json()) as { password?: unknown }).password ?? "");
    else password = String((await req.formData()).get("password") ?? "");
  } catch {
    return Response.json({ error: "BAD_INPUT", message: "send a password" }, { status: 400 });
  }
  try {
    const { sessionId, expiresAt } = await login(deps.db, password.slice(0, 1024));
    const secure = new URL(req.url).protocol === "https:";
    const headers = new Headers({ "set-cookie": sessionCookie(sessionId, expiresAt, secure) });
    if (isJson) return Response.json({ ok: true }, { headers });
    headers.set("location", "/");
    return new Response(null, { status: 303, headers });
  } catch (err) {
    if (!(err instanceof MeshError)) throw err;
    deps.log.warn({ address: remoteAddress(req) }, "login refused");
    if (isJson) return Response.json(err.toJSON(), { status: 401 });
    return new Response(null, { status: 303, headers: { location: "/login?error=1" } });
  }
}
