import { handleApt } from "@mesh/api";
import { getRuntime, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export async function GET(_req: Request, { params }: { params: Promise<{ path: string[] }> }) {
  return handleApt(runtimeDeps(), getRuntime().apt, (await params).path.join("/"));
}
