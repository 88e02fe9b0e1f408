// JSON request bodies (through the one bounded reader, text Postgres can store), and errors as JSON
// responses: MeshError with its status and message, anything else a generic 500 with an id in the log.
import { describeUnstorableText, findUnstorableText } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError, newErrorId } from "../errors";
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
  if (err instanceof MeshError) return Response.json(err.toJSON(), { status: err.status });
  const errorId = newErrorId();
  deps.log.error({ err, errorId }, "unhandled error");
  return Response.json({ error: "INTERNAL", message: `internal error (id ${errorId}); the control plane's log has the details`, errorId }, { status: 500 });
}
