// /api/files: admins upload and download (key or session), hosts download with a request
// signed by their node key, and only the files their own declaration names; viewers never (a source may be a secret).
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { authenticateCaller } from "../auth/authenticate-caller";
import { getBlobOrThrow, putBlob } from "../services/blobs";
import { jsonError } from "./json-body";
import { BODY_LIMITS, readBody } from "./request-body";
import { authenticateNodeRequest } from "./node-signature";
import { nodeDeclaresFile } from "../services/node-declares-file";

export async function handleFileUpload(deps: Deps, request: Request): Promise<Response> {
  try {
    const caller = await authenticateCaller(deps.db, request.headers);
    if (!caller) throw new MeshError("UNAUTHORIZED", "log in or send Authorization: Bearer <admin API key>");
    if (caller.role !== "admin") throw new MeshError("FORBIDDEN", "uploading files needs an admin");
    const actor = caller.name;
    if (!/^application\/octet-stream\b/i.test(request.headers.get("content-type") ?? ""))
      throw new MeshError("UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/octet-stream");
    return Response.json(await putBlob(deps, { actor, data: await readBody(request, BODY_LIMITS.upload) }), { status: 201 });
  } catch (err) {
    return jsonError(deps, err);
  }
}

export async function handleFileDownload(deps: Deps, request: Request, sha256: string): Promise<Response> {
  try {
    // The name is checked first, for everyone: a blob is named by its lower-case sha256 and nothing else.
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new MeshError("BAD_INPUT", "a file is named by its sha256: 64 lower-case hex digits");
    // Only an admin (user or key) reads any file; a viewer reads none, since a source may hold a secret.
    // Anyone else must be a host's signed request.
    const caller = request.headers.has("authorization") || request.headers.has("cookie") ? await authenticateCaller(deps.db, request.headers) : null;
    if (caller && caller.role !== "admin") throw new MeshError("FORBIDDEN", "reading files needs an admin (a file may hold a secret)");
    if (!caller) {
      const { nodeId } = await authenticateNodeRequest(deps.db, request);
      // A host reads only what its own declaration names (a blob may be another node's secret).
      if (!(await nodeDeclaresFile(deps.db, nodeId, sha256))) {
        deps.log.warn({ nodeId, sha256 }, "file refused: not in the node's declaration");
        throw new MeshError("FORBIDDEN", "this file is not a source in your node's declaration");
      }
    }
    const data = await getBlobOrThrow(deps, sha256);
    const headers = { "content-type": "application/octet-stream", "cache-control": "private, immutable", "accept-ranges": "bytes" };
    // A host resumes a download a dropped connection cut (one range, from a byte on).
    const range = byteRange(request.headers.get("range"), data.length);
    if (range === "unsatisfiable") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${data.length}` } });
    if (range) {
      const part = data.subarray(range.start, range.end + 1);
      return new Response(new Uint8Array(part), {
        status: 206,
        headers: { ...headers, "content-length": String(part.length), "content-range": `bytes ${range.start}-${range.end}/${data.length}` },
      });
    }
    return new Response(new Uint8Array(data), { headers: { ...headers, "content-length": String(data.length) } });
  } catch (err) {
    return jsonError(deps, err);
  }
}

/**
 * One `bytes=N-` or `bytes=N-M` range (RFC 9110 14.1.2); null for none or a form not served
 * (several ranges, a suffix), which gets the whole file.
 */
export function byteRange(header: string | null, size: number): { start: number; end: number } | "unsatisfiable" | null {
  const m = /^bytes=(\d{1,15})-(\d{0,15})$/.exec(header?.trim() ?? "");
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}
