// The tRPC API over HTTP: queries by GET, mutations by POST (JSON, same Origin
// from a browser, a bounded body), authenticated inside every procedure.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter, BODY_LIMITS, createTrpcContext, DATABASE_RETRY_AFTER_SECONDS, errorIdOf, MeshError, withBoundedBody } from "@mesh/api";
import { getRuntime, publicUrlFromHeaders, runtimeDeps } from "@/server/runtime";
import { checkMutationRequest } from "@/server/same-origin";

export const dynamic = "force-dynamic";

// The JSON-RPC codes tRPC itself uses for these.
const RPC_CODES: Record<string, number> = { FORBIDDEN: -32003, UNSUPPORTED_MEDIA_TYPE: -32600, PAYLOAD_TOO_LARGE: -32013 };
const refuse = (status: number, code: string, message: string) =>
  Response.json({ error: { message, code: RPC_CODES[code], data: { code, httpStatus: status } } }, { status });

async function handler(req: Request) {
  if (req.method === "POST") {
    const check = checkMutationRequest(req);
    if (!check.ok) return refuse(check.status, check.status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "FORBIDDEN", check.message);
    // tRPC's fetch adapter reads the body itself, without a limit: read it here, bounded, first.
    try {
      req = await withBoundedBody(req, BODY_LIMITS.api);
    } catch (err) {
      if (err instanceof MeshError) return refuse(err.status, "PAYLOAD_TOO_LARGE", err.message);
      throw err;
    }
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () =>
      createTrpcContext({ deps: runtimeDeps(), headers: req.headers, publicUrl: publicUrlFromHeaders(req.headers), tlsPin: getRuntime().tlsPin }),
    // A database that cannot answer is a 503 (errors.ts): the caller is told when to try again.
    responseMeta: ({ errors }) =>
      errors.some((e) => e.code === "SERVICE_UNAVAILABLE") ? { headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) } } : {},
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        getRuntime().log.error({ err: error.cause ?? error, path, errorId: errorIdOf(error) }, "tRPC procedure failed");
    },
  });
}

export { handler as GET, handler as POST };
