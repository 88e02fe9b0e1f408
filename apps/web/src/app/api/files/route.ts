// File upload: an admin's session or key, from our own origin (like every other mutation).
import { handleFileUpload } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";
import { checkMutationRequest } from "@/server/same-origin";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  const check = checkMutationRequest(req, "application/octet-stream");
  if (!check.ok)
    return Response.json({ error: check.status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "FORBIDDEN", message: check.message }, { status: check.status });
  return handleFileUpload(runtimeDeps(), req);
}
