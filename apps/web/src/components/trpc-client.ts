// The browser's tRPC client: same-origin, the session cookie authenticates.
import { createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "@mesh/api";

export const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: "/api/trpc" })] });
