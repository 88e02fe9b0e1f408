// /api/files: operators upload (admin key or session), hosts download with a
// request signed by their node key.
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { authenticateCaller } from "../auth/authenticate-caller";
import { BLOB_MAX_BYTES, getBlobOrThrow, putBlob } from "../services/blobs";
import { jsonError } from "./json-body";
import { authenticateNodeRequest } from "./node-signature";

async function readBody(request: Request, max: number): Promise<Buffer> {
  if (Number(request.headers.get("content-length") ?? "0") > max) throw new MeshError("TOO_LARGE", `body over ${max} bytes`);
  const data = Buffer.from(await request.arrayBuffer());
  if (data.length > max) throw new MeshError("TOO_LARGE", `body over ${max} bytes`);
  return data;
}

export async function handleFileUpload(deps: Deps, request: Request): Promise<Response> {
  try {
    const caller = await authenticateCaller(deps.db, request.headers);
    if (!caller) throw new MeshError("UNAUTHORIZED", "log in or send Authorization: Bearer <admin API key>");
    if (caller.role !== "admin") throw new MeshError("FORBIDDEN", "uploading files needs an admin");
    const actor = caller.name;
    if (!/^application\/octet-stream\b/i.test(request.headers.get("content-type") ?? "")) throw new MeshError("UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/octet-stream");
    return Response.json(await putBlob(deps, { actor, data: await readBody(request, BLOB_MAX_BYTES) }), { status: 201 });
  } catch (err) {
    return jsonError(deps, err);
  }
}

export async function handleFileDownload(deps: Deps, request: Request, sha256: string): Promise<Response> {
  try {
    // A logged-in user or key may read files; otherwise it must be a host's signed request.
    const caller = request.headers.has("authorization") || request.headers.has("cookie") ? await authenticateCaller(deps.db, request.headers) : null;
    if (!caller) await authenticateNodeRequest(deps.db, request);
    const data = await getBlobOrThrow(deps, sha256);
    return new Response(new Uint8Array(data), { headers: { "content-type": "application/octet-stream", "content-length": String(data.length), "cache-control": "private, immutable" } });
  } catch (err) {
    return jsonError(deps, err);
  }
}
