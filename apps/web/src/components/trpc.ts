// The browser's tRPC bindings for TanStack Query: useTRPC() gives query and
// mutation options for every procedure; the session cookie authenticates.
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "@mesh/api";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();
