import { handleFileDownload } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export async function GET(req: Request, { params }: { params: Promise<{ sha256: string }> }) {
  return handleFileDownload(runtimeDeps(), req, (await params).sha256);
}
