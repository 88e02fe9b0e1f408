// The fleet's view in the URL (issue 13): every filter, the sort and the page, so a view can be
// reloaded, shared and exported. The names are the ones GET /api/nodes/export reads
// (packages/api http/nodes-export-handler.ts).
import { NodeState, parseLabelFilter } from "@mesh/protocol";

export const FLEET_SORTS = ["name", "state", "health", "lastSeenAt", "lastCheckedAt", "lastChangedAt", "driftCount", "hostVersion"] as const;
export type FleetSort = (typeof FLEET_SORTS)[number];

/** What the filter bar holds: text as typed (an invalid one is kept and shown as invalid). */
export interface FleetView {
  state: string;
  health: string;
  q: string;
  labels: string;
  role: string;
  drift: "" | "yes" | "no";
  sort: FleetSort;
  order: "asc" | "desc";
  page: number;
}

export const DEFAULT_VIEW: FleetView = { state: "", health: "", q: "", labels: "", role: "", drift: "", sort: "name", order: "asc", page: 0 };

export function viewFromParams(params: URLSearchParams): FleetView {
  const get = (k: string) => params.get(k) ?? "";
  const sort = get("sort");
  const drift = get("drift");
  const page = Number(get("page") || "1");
  return {
    state: get("state"),
    health: get("health"),
    q: get("q"),
    labels: get("labels"),
    role: get("role"),
    drift: drift === "yes" || drift === "no" ? drift : "",
    sort: (FLEET_SORTS as readonly string[]).includes(sort) ? (sort as FleetSort) : "name",
    order: get("order") === "desc" ? "desc" : "asc",
    page: Number.isInteger(page) && page >= 1 ? page - 1 : 0,
  };
}

/** Only what differs from the default view (pages count from 1 in the URL). */
export function paramsFromView(view: FleetView): URLSearchParams {
  const p = new URLSearchParams();
  for (const k of ["state", "health", "q", "labels", "role", "drift"] as const) if (view[k].trim()) p.set(k, view[k].trim());
  if (view.sort !== "name" || view.order !== "asc") {
    p.set("sort", view.sort);
    p.set("order", view.order);
  }
  if (view.page > 0) p.set("page", String(view.page + 1));
  return p;
}

/** Each field's reason to be invalid (the API's own words), if any. */
export function viewErrors(view: FleetView, healths: readonly string[]): Partial<Record<"state" | "health" | "labels", string>> {
  const errors: Partial<Record<"state" | "health" | "labels", string>> = {};
  if (view.state && !NodeState.safeParse(view.state).success) errors.state = `"${view.state}" is not a state`;
  if (view.health && !healths.includes(view.health)) errors.health = `"${view.health}" is not a health`;
  if (view.labels.trim()) {
    const parsed = parseLabelFilter(view.labels);
    if ("error" in parsed) errors.labels = parsed.error;
  }
  return errors;
}
