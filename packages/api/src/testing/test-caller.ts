// The tRPC API called in-process as a logged-in user (no HTTP, no session): for tests that go through
// the routers, their input parsing and their access rules.
import type { Deps } from "../deps";
import { createCaller } from "../root";
import type { TrpcContext } from "../trpc";

export function testCaller(deps: Deps, role: "admin" | "viewer" = "admin", actor = "user:ada") {
  return createCaller({ ...deps, actor, role, user: null, publicUrl: "http://cp" } satisfies TrpcContext);
}
