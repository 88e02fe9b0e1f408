// A tRPC caller for server components: the same procedures, the same checks,
// authenticated by the request's session cookie; no session means the login page.
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { createCaller, createTrpcContext } from "@mesh/api";
import { getRuntime, publicUrlFromHeaders, runtimeDeps } from "./runtime";

export async function dashboardCaller() {
  const h = new Headers(await headers());
  const { tlsPin } = getRuntime();
  const ctx = await createTrpcContext({ deps: runtimeDeps(), headers: h, publicUrl: publicUrlFromHeaders(h), tlsPin });
  if (!ctx.actor) redirect("/login");
  return createCaller(ctx);
}
