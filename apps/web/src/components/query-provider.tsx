"use client";
// One QueryClient and one tRPC client per browser tab, for every dashboard page.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpLink } from "@trpc/client";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@mesh/api";
import { TRPCProvider } from "./trpc";

export function QueryProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          // A 4xx will not get better by asking again; a dropped connection might.
          queries: {
            staleTime: 1000,
            retry: (n, err) => n < 2 && !/UNAUTHORIZED|FORBIDDEN|NOT_FOUND|BAD_REQUEST/.test(String((err as { data?: { code?: string } }).data?.code)),
          },
        },
      }),
  );
  const [trpcClient] = useState(() => createTRPCClient<AppRouter>({ links: [httpLink({ url: "/api/trpc" })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
