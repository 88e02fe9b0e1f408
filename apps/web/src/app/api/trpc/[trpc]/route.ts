// The tRPC API over HTTP: queries by GET, mutations by POST (JSON, same Origin
// from a browser), authenticated inside every procedure.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter, createTrpcContext } from "@mesh/api";
import { getRuntime, publicUrlFor, runtimeDeps } from "@/server/runtime";
import { checkMutationRequest } from "@/server/same-origin";

export const dynamic = "force-dynamic";

function handler(req: Request) {
  if (req.method === "POST") {
    const check = checkMutationRequest(req);
    if (!check.ok) {
      const code = check.status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "FORBIDDEN";
      return Response.json({ error: { message: check.message, code: check.status === 415 ? -32600 : -32003, data: { code, httpStatus: check.status } } }, { status: check.status });
    }
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => createTrpcContext({ deps: runtimeDeps(), headers: req.headers, publicUrl: publicUrlFor(req), tlsPin: getRuntime().tlsPin }),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") getRuntime().log.error({ err: error.cause ?? error, path }, "tRPC procedure failed");
    },
  });
}

export { handler as GET, handler as POST };
