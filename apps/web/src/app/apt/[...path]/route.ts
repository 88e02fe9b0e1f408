import { handleApt } from "@mesh/api";
import { getRuntime, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ path: string[] }> };

async function answer(req: Request, { params }: Params) {
  return handleApt(runtimeDeps(), getRuntime().apt, (await params).path.join("/"), req.method);
}

export const GET = answer;
// Its own HEAD: one derived from GET would open the file and leave its descriptor to the garbage collector.
export const HEAD = answer;
