// What a bulk action in the Fleet acts on: nodes picked one by one, or every node matching the
// current filter (resolved to ids when the action runs, at most MAX_BULK nodes per call).
import type { inferRouterInputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";

export type FleetFilter = Omit<NonNullable<inferRouterInputs<AppRouter>["node"]["list"]>, "limit" | "offset">;
export type BulkSelection = { kind: "ids"; ids: string[] } | { kind: "matching"; filter: FleetFilter; total: number };

/** The API's limit per call (MAX_NODES_PER_CALL in packages/api/src/services/node-set.ts). */
export const MAX_BULK = 1000;

export const selectedCount = (s: BulkSelection) => (s.kind === "ids" ? s.ids.length : s.total);
