// POST /api/bootstrap/token: local-only. The peer must be loopback and nothing
// may have forwarded the request (a proxy on this machine would make a remote
// caller look local); then the secret is traded once for node one's token.
import { describeZodError } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { BootstrapTokenRequest, issueBootstrapToken } from "../services/tokens";
import { jsonError, readJsonBody } from "./json-body";
import { BODY_LIMITS } from "./request-body";
import { addressKey } from "./address-key";
import { EventBudget } from "./event-budget";

/** Anyone can be refused: "bootstrap refused" lines per address key, 10 per 10 minutes (then counted). */
const refusedLog = new EventBudget(10, 10 * 60_000);

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.replace(/^::ffff:/, "");
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

export async function handleBootstrapToken(
  deps: Deps,
  request: Request,
  opts: { address?: string; forwarded: boolean; secretFile?: string; publicUrl: string; tlsPin?: string },
): Promise<Response> {
  try {
    if (!opts.secretFile) throw new MeshError("NOT_FOUND", "bootstrap is not enabled on this control plane (MESH_BOOTSTRAP_SECRET_FILE)");
    if (!isLoopback(opts.address) || opts.forwarded) {
      throw new MeshError("FORBIDDEN", "bootstrap is accepted only from this machine (loopback, not forwarded)");
    }
    const parsed = BootstrapTokenRequest.safeParse(await readJsonBody(request, BODY_LIMITS.bootstrap));
    if (!parsed.success) throw new MeshError("BAD_INPUT", `invalid bootstrap request: ${describeZodError(parsed.error)}`);
    const answer = await issueBootstrapToken(deps, { secretFile: opts.secretFile, publicUrl: opts.publicUrl, tlsPin: opts.tlsPin, request: parsed.data });
    return Response.json(answer, { status: 201 });
  } catch (err) {
    const slot = err instanceof MeshError ? refusedLog.take(addressKey(opts.address)) : null;
    if (err instanceof MeshError && slot)
      deps.log.warn({ address: opts.address, reason: err.message, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) }, "bootstrap refused");
    return jsonError(deps, err);
  }
}
