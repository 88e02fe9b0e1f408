// Reading a JSON request body with a size limit, and turning errors into JSON
// responses: MeshError with its status and message, anything else a bare 500.
import type { Deps } from "../deps";
import { MeshError } from "../errors";

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new MeshError("UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json");
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new MeshError("TOO_LARGE", `body over ${maxBytes} bytes`);
  const reader = request.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new MeshError("TOO_LARGE", `body over ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new MeshError("BAD_INPUT", "the body is not valid JSON");
  }
}

export function jsonError(deps: Pick<Deps, "log">, err: unknown): Response {
  if (err instanceof MeshError) return Response.json(err.toJSON(), { status: err.status });
  deps.log.error({ err }, "unhandled error");
  return Response.json({ error: "INTERNAL", message: "internal error; see the control plane's log" }, { status: 500 });
}
