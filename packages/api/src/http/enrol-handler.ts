// POST /api/enrol as a fetch handler (Request -> Response), so the Next route is
// one line. Size-limited, zod-parsed; refusals carry a reason, never a stack.
import { EnrolRequest, describeZodError } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { enrolNode } from "../services/enrol-node";
import { jsonError, readJsonBody } from "./json-body";
import { describeWait, FailureBackoff } from "./failure-backoff";
import { BODY_LIMITS } from "./request-body";
import { parseToken } from "../services/enrolment-token";
import { addressKey } from "./address-key";
import { EventBudget } from "./event-budget";

/**
 * Failed enrolments back off per (token id, address), so whoever knows a token's
 * public id cannot block it for hosts elsewhere, and per address over every token,
 * which is what slows down guessing. Successful enrolments never count.
 */
export interface EnrolLimits {
  perAddress: FailureBackoff;
  perTokenAddress: FailureBackoff;
  /** enrol.refused events per address key: anyone can be refused, so the audit log is budgeted too. */
  refusedEvents: EventBudget;
}

/** enrol.refused events one address key may write per hour; the next one written counts those left out. */
export const REFUSED_EVENTS_PER_HOUR = 10;

/** Each number is the failures allowed before the backoff starts (1 s, doubling, at most 15 min). */
export function createEnrolLimits(perAddress = 30, perTokenAddress = 10, now?: () => number): EnrolLimits {
  return {
    perAddress: new FailureBackoff({ freeFailures: perAddress, now }),
    perTokenAddress: new FailureBackoff({ freeFailures: perTokenAddress, now }),
    refusedEvents: new EventBudget(REFUSED_EVENTS_PER_HOUR, 60 * 60_000, now),
  };
}

function refuse(what: string, retryAfterMs: number): MeshError {
  return new MeshError("RATE_LIMITED", `too many enrolment attempts ${what}; try again in ${describeWait(retryAfterMs)}`);
}

export async function handleEnrol(deps: Deps, request: Request, opts: { address?: string; limits: EnrolLimits }): Promise<Response> {
  const { limits } = opts;
  // Keyed like every per-address limit: an IPv6 /64 is one address.
  const address = addressKey(opts.address);
  let tokenKey: string | null = null;
  let counted = false;
  try {
    const byAddress = limits.perAddress.attempt(address);
    if (!byAddress.allowed) throw refuse("from this address", byAddress.retryAfterMs);
    counted = true;
    const body = await readJsonBody(request, BODY_LIMITS.enrol);
    const parsed = EnrolRequest.safeParse(body);
    if (!parsed.success) throw new MeshError("BAD_INPUT", `invalid enrolment: ${describeZodError(parsed.error)}`);
    const tokenId = parseToken(parsed.data.token)?.id;
    if (tokenId) {
      const byToken = limits.perTokenAddress.attempt(`${tokenId}\u0000${address}`);
      if (!byToken.allowed) throw refuse("with this token from this address", byToken.retryAfterMs);
      tokenKey = `${tokenId}\u0000${address}`;
    }
    const result = await enrolNode(deps, parsed.data, { address: opts.address, refusalEvent: () => limits.refusedEvents.take(address) });
    if (tokenKey) limits.perTokenAddress.succeeded(tokenKey);
    limits.perAddress.forgive(address);
    return Response.json(result, { status: 201 });
  } catch (err) {
    // A refusal by the limits is not itself a failure to count.
    if (err instanceof MeshError && err.code === "RATE_LIMITED" && counted) limits.perAddress.forgive(address);
    return jsonError(deps, err);
  }
}
