// POST /api/enrol as a fetch handler (Request -> Response), so the Next route is
// one line. Size-limited, zod-parsed; refusals carry a reason, never a stack.
import { EnrolRequest, describeZodError } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { enrolNode } from "../services/enrol-node";
import { jsonError, readJsonBody } from "./json-body";
import { BODY_LIMITS } from "./request-body";
import { RateLimiter } from "./rate-limiter";
import { parseToken } from "../services/enrolment-token";

/** Enrolment is rate-limited per address and per token id, to slow down guessing. */
export interface EnrolLimits {
  perAddress: RateLimiter;
  perToken: RateLimiter;
}

export function createEnrolLimits(perAddressPerMinute = 30, perTokenPerMinute = 10): EnrolLimits {
  return { perAddress: new RateLimiter(perAddressPerMinute, 60_000), perToken: new RateLimiter(perTokenPerMinute, 60_000) };
}

export async function handleEnrol(deps: Deps, request: Request, opts: { address?: string; limits: EnrolLimits }): Promise<Response> {
  const { address, limits } = opts;
  try {
    if (address && !limits.perAddress.take(address)) throw new MeshError("RATE_LIMITED", "too many enrolment attempts from this address; try again in a minute");
    const body = await readJsonBody(request, BODY_LIMITS.enrol);
    const parsed = EnrolRequest.safeParse(body);
    if (!parsed.success) throw new MeshError("BAD_INPUT", `invalid enrolment: ${describeZodError(parsed.error)}`);
    const tokenId = parseToken(parsed.data.token)?.id;
    if (tokenId && !limits.perToken.take(tokenId)) throw new MeshError("RATE_LIMITED", "too many enrolment attempts with this token; try again in a minute");
    const result = await enrolNode(deps, parsed.data, { address });
    return Response.json(result, { status: 201 });
  } catch (err) {
    return jsonError(deps, err);
  }
}
