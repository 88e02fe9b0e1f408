// /apt/...: the signed apt repository (apt/apt-repository.ts). Only paths its index names are
// answered, looked up whole, so no request path is ever joined onto a directory; 503 while the
// control plane lacks the tools to build it.
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import type { AptRepository } from "../apt/apt-repository";
import { fileResponse, headOf } from "./file-body";
import { jsonError } from "./json-body";

const MAX_PATH = 512;
const CONTENT_TYPES = { deb: "application/vnd.debian.binary-package", index: "text/plain; charset=utf-8", key: "application/pgp-keys" } as const;

/** `method` GET or HEAD (apt asks HEAD of some files): HEAD answers the headers and reads nothing. */
export async function handleApt(deps: Pick<Deps, "log">, repo: AptRepository, rel: string, method = "GET"): Promise<Response> {
  try {
    if (rel.length > MAX_PATH) throw new MeshError("NOT_FOUND", "no such file in the apt repository");
    const looked = await repo.lookup(rel);
    if (looked.kind === "unavailable") throw new MeshError("UNAVAILABLE", looked.message);
    if (looked.kind === "none") throw new MeshError("NOT_FOUND", `no ${rel.slice(0, 120)} in the apt repository`);
    const found = looked.file;
    const contentType = rel.endsWith(".gz") ? "application/gzip" : CONTENT_TYPES[found.kind];
    // Streamed: anyone may fetch, so no request holds a whole .deb in memory. From the descriptor the
    // lookup opened, never the path again: a rebuild meanwhile may have removed the file (it reads on).
    // fileResponse closes it however the request ends.
    return await fileResponse(method, found.handle, found.size, {
      "content-type": contentType,
      "cache-control": found.kind === "deb" ? "public, max-age=300" : "no-cache",
    });
  } catch (err) {
    const res = jsonError(deps, err);
    return method === "HEAD" ? headOf(res) : res;
  }
}
