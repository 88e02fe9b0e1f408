// JSON request bodies (through the one bounded reader, text Postgres can store), and errors as JSON
// responses: MeshError with its status and message, anything else a generic 500 with an id in the log.
import { describeUnstorableText, findUnstorableText } from "@mesh/protocol";
import type { Deps } from "../deps";
import { asMeshError, MeshError, newErrorId } from "../errors";
import { readBody } from "./request-body";

/** Parses JSON text; refuses invalid JSON and any string or key Postgres cannot store (NUL, lone surrogate), naming the field. */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MeshError("BAD_INPUT", "the body is not valid JSON");
  }
  const unstorable = findUnstorableText(value);
  if (unstorable) throw new MeshError("BAD_INPUT", describeUnstorableText(unstorable));
  return value;
}

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new MeshError("UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json");
  return parseJsonText((await readBody(request, maxBytes)).toString("utf8"));
}

export function jsonError(deps: Pick<Deps, "log">, err: unknown): Response {
  const mesh = asMeshError(err);
  if (mesh) {
    if (mesh.code === "DATABASE_UNAVAILABLE" && !(err instanceof MeshError)) deps.log.warn({ err: describeCause(err) }, "database unavailable");
    return Response.json(mesh.toJSON(), { status: mesh.status, headers: mesh.headers() });
  }
  const errorId = newErrorId();
  deps.log.error({ err, errorId }, "unhandled error");
  return Response.json({ error: "INTERNAL", message: `internal error (id ${errorId}); the control plane's log has the details`, errorId }, { status: 500 });
}

/** A driver error for the log: its code and message, not the stack of every request that hit the outage. */
function describeCause(err: unknown): { code?: unknown; message?: unknown } {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  while (e && typeof e === "object" && e.cause && typeof e.code !== "string") e = e.cause as typeof e;
  return { code: e?.code, message: e?.message };
}
