// A tRPC caller for server components: the same procedures, the same checks,
// authenticated by the request's session cookie; no session means the login page.
// A database that cannot answer reaches the error page marked as such (error.tsx).
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { TRPCError } from "@trpc/server";
import { createCaller, createTrpcContext } from "@mesh/api";
import { DATABASE_UNAVAILABLE_DIGEST } from "@/components/database-unavailable";
import { getRuntime, publicUrlFromHeaders, runtimeDeps } from "./runtime";

function markUnavailable(error: unknown): unknown {
  if (error instanceof TRPCError && error.code === "SERVICE_UNAVAILABLE") Object.assign(error, { digest: DATABASE_UNAVAILABLE_DIGEST });
  return error;
}

export async function dashboardCaller() {
  const h = new Headers(await headers());
  const { tlsPin } = getRuntime();
  const ctx = await createTrpcContext({ deps: runtimeDeps(), headers: h, publicUrl: publicUrlFromHeaders(h), tlsPin }).catch((err) => {
    throw markUnavailable(err);
  });
  if (!ctx.actor) redirect("/login");
  return createCaller(ctx, { onError: ({ error }) => void markUnavailable(error) });
}
