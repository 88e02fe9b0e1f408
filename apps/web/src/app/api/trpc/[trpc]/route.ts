import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter, createTrpcContext } from "@mesh/api";
import { getRuntime, publicUrlFor, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

function handler(req: Request) {
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
