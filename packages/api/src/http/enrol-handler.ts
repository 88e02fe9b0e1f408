// POST /api/enrol as a fetch handler (Request -> Response), so the Next route is
// one line. Size-limited, zod-parsed; refusals carry a reason, never a stack.
import { EnrolRequest, LIMITS, describeZodError } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { enrolNode } from "../services/enrol-node";
import { jsonError, readJsonBody } from "./json-body";

export async function handleEnrol(deps: Deps, request: Request, address?: string): Promise<Response> {
  try {
    const body = await readJsonBody(request, LIMITS.enrolBodyBytes);
    const parsed = EnrolRequest.safeParse(body);
    if (!parsed.success) throw new MeshError("BAD_INPUT", `invalid enrolment: ${describeZodError(parsed.error)}`);
    const result = await enrolNode(deps, parsed.data, { address });
    return Response.json(result, { status: 201 });
  } catch (err) {
    return jsonError(deps, err);
  }
}
