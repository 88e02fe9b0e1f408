import { handleEnrol } from "@mesh/api";
import { getRuntime, remoteAddress, runtimeDeps } from "@/server/runtime";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  return handleEnrol(runtimeDeps(), req, { address: remoteAddress(req), limits: getRuntime().enrolLimits });
}
