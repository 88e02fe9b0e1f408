import { clearedSessionCookie, logout, readCookie, SESSION_COOKIE } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export async function POST(req: Request) {
  const session = readCookie(req.headers.get("cookie"), SESSION_COOKIE);
  if (session) await logout(runtimeDeps().db, session);
  return new Response(null, { status: 303, headers: { location: "/login", "set-cookie": clearedSessionCookie() } });
}
