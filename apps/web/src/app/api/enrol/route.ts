import { handleEnrol } from "@mesh/api";
import { runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  return handleEnrol(runtimeDeps(), req, req.headers.get("x-forwarded-for") ?? undefined);
}
