import { handleFileUpload } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  return handleFileUpload(runtimeDeps(), req);
}
