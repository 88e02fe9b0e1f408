import { handleDownload } from "@mesh/api";
import { getRuntime, publicUrlFromHeaders, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export async function GET(req: Request, { params }: { params: Promise<{ name: string }> }) {
  const { config, hostVersion } = getRuntime();
  return handleDownload(runtimeDeps(), (await params).name, { artifactsDir: config.artifactsDir, hostVersion, publicUrl: publicUrlFromHeaders(req.headers) });
}
