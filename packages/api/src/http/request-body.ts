// The one way an HTTP body is read on the control plane: refused by its declared
// length, then counted while streaming, so no caller holds more than its limit.
import { LIMITS } from "@mesh/protocol";
import { MeshError } from "../errors";
import { BLOB_MAX_BYTES } from "../services/blobs";

/** What each entry point accepts, in bytes. */
export const BODY_LIMITS = {
  /** tRPC: a role is at most a declaration's worth (LIMITS.frameBytes) plus JSON escaping. */
  api: 2 * LIMITS.frameBytes,
  login: 16 * 1024,
  /** Logout takes no body; a little slack for clients that send an empty form. */
  logout: 1024,
  enrol: LIMITS.enrolBodyBytes,
  bootstrap: LIMITS.enrolBodyBytes,
  upload: BLOB_MAX_BYTES,
} as const;

const tooLarge = (max: number) => new MeshError("TOO_LARGE", `the body is over ${max} bytes`);

/** Throws TOO_LARGE when the declared Content-Length alone is over the limit (nothing is read). */
export function checkDeclaredLength(request: Request, maxBytes: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && (!/^\d+$/.test(declared) || Number(declared) > maxBytes)) throw tooLarge(maxBytes);
}

/** Reads the whole body, at most maxBytes; stops reading (and cancels the stream) at the first byte over. */
export async function readBody(request: Request, maxBytes: number): Promise<Buffer> {
  checkDeclaredLength(request, maxBytes);
  const reader = request.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** The same request with its body read (bounded) into memory, for handlers that read the body themselves (tRPC). */
export async function withBoundedBody(request: Request, maxBytes: number): Promise<Request> {
  if (request.method === "GET" || request.method === "HEAD") return request;
  const body = await readBody(request, maxBytes);
  return new Request(request.url, { method: request.method, headers: request.headers, body: new Uint8Array(body), signal: request.signal });
}
