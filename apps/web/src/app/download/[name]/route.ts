import { handleDownload } from "@mesh/api";
import { getRuntime, publicUrlFromHeaders, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ name: string }> };

async function answer(req: Request, { params }: Params) {
  const { config, hostVersion } = getRuntime();
  return handleDownload(
    runtimeDeps(),
    (await params).name,
    { artifactsDir: config.artifactsDir, hostVersion, publicUrl: publicUrlFromHeaders(req.headers) },
    req.method,
  );
}

export const GET = answer;
// Its own HEAD: one derived from GET would open the artifact and leave its descriptor to the garbage collector.
export const HEAD = answer;
