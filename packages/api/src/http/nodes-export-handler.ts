// GET /api/nodes.csv?<the fleet page's query>: the current view of the fleet as CSV, for any caller
// that may read the fleet (session or API key). The query uses the fleet page's URL names, checked by
// the list's own schema: an invalid filter is a 400 naming it, never an export of something else.
import { parseLabelFilter } from "@mesh/protocol";
import { nowOf, type Deps } from "../deps";
import { MeshError } from "../errors";
import { authenticateCaller } from "../auth/authenticate-caller";
import { exportNodesCsv } from "../services/export-nodes";
import { NodeFilter } from "../services/list-nodes";
import { jsonError } from "./json-body";

/** The fleet page's URL parameters (apps/web fleet-url.ts writes them) as a NodeFilter. */
export function nodeFilterFromQuery(params: URLSearchParams): NodeFilter {
  const known = new Set(["state", "health", "q", "labels", "role", "drift", "sort", "order", "page"]);
  for (const key of params.keys()) if (!known.has(key)) throw new MeshError("BAD_INPUT", `unknown parameter "${key}"`);
  const text = (k: string) => params.get(k) || undefined;
  const labelsText = text("labels");
  const labels = labelsText ? parseLabelFilter(labelsText) : undefined;
  if (labels && "error" in labels) throw new MeshError("BAD_INPUT", `labels: ${labels.error}`);
  const drift = text("drift");
  if (drift !== undefined && drift !== "yes" && drift !== "no") throw new MeshError("BAD_INPUT", `drift is "yes" or "no"`);
  const parsed = NodeFilter.safeParse({
    state: text("state"),
    health: text("health"),
    search: text("q"),
    labels: labels?.conditions,
    role: text("role"),
    drift: drift === undefined ? undefined : drift === "yes",
    sort: text("sort"),
    order: text("order"),
  });
  if (!parsed.success) throw new MeshError("BAD_INPUT", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return parsed.data;
}

export async function handleNodesExport(deps: Deps, request: Request): Promise<Response> {
  try {
    const caller = await authenticateCaller(deps.db, request.headers);
    if (!caller) throw new MeshError("UNAUTHORIZED", "log in or send Authorization: Bearer <API key>");
    const filter = nodeFilterFromQuery(new URL(request.url).searchParams);
    const lines = exportNodesCsv(deps, filter);
    // The first page is read before answering, so a database that cannot answer is a 503, not a cut file.
    const first = [await lines.next(), await lines.next()];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const r of first) if (!r.done) controller.enqueue(new TextEncoder().encode(r.value));
        if (first.some((r) => r.done)) controller.close();
      },
      async pull(controller) {
        try {
          const next = await lines.next();
          if (next.done) controller.close();
          else controller.enqueue(new TextEncoder().encode(next.value));
        } catch (err) {
          deps.log.warn({ err: (err as Error).message }, "fleet export cut short");
          controller.error(err);
        }
      },
      cancel: () => void lines.return(undefined),
    });
    const stamp = nowOf(deps).toISOString().slice(0, 19).replace(/[:T]/g, "-");
    return new Response(stream, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="mesh-fleet-${stamp}.csv"`,
        "cache-control": "no-store",
      },
    });
  } catch (err) {
    return jsonError(deps, err);
  }
}
