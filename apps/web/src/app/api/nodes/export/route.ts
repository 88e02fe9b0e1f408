// The fleet's current view as CSV: GET /api/nodes/export?<the fleet page's query> (session or API key).
import { handleNodesExport } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleNodesExport(runtimeDeps(), req);
}
