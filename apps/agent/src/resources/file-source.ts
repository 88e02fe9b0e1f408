// Files served by the control plane: a path is fetched from the enrolled control
// plane with a request signed by the node key (over the pinned TLS), and checked against its sha256.
import { createHash, sign, type KeyObject } from "node:crypto";
import { HTTP_SIGNATURE_HEADERS, httpSignatureMessage, type RemoteSource } from "@mesh/protocol";
import { endpoint } from "../link/auth";
import { controlPlaneRequest } from "../link/control-plane-http";
import type { Trust } from "../link/trust";
import { sha256Hex } from "./observed";

/** Larger than any file a declaration may carry inline, with room: a cap, not a format. */
const MAX_SOURCE_BYTES = 512 * 1024 * 1024;
const EMPTY_SHA256 = createHash("sha256").digest("hex");

/** What an enrolled host needs to fetch from its control plane. */
export interface ControlPlaneAccess {
  url: string;
  nodeId: string;
  privateKey: KeyObject;
  trust?: Trust;
}

export function sourceFetcher(controlPlane: ControlPlaneAccess | null): (source: RemoteSource) => Promise<Buffer> {
  return async (source) => {
    let body: Buffer;
    if (/^https?:\/\//.test(source.url)) {
      body = await fetchElsewhere(source.url);
    } else {
      if (!controlPlane) throw new Error(`source ${source.url}: this host is not enrolled, so it has no control plane to fetch from`);
      body = await fetchSigned(controlPlane, source.url);
    }
    const sha = sha256Hex(body);
    if (sha !== source.sha256) {
      throw new Error(`source ${source.url}: sha256 ${sha.slice(0, 12)}…, declared ${source.sha256.slice(0, 12)}…; not written`);
    }
    return body;
  };
}

async function fetchSigned(cp: ControlPlaneAccess, path: string): Promise<Buffer> {
  const url = new URL(endpoint(cp.url, path.split("?")[0]!));
  if (path.includes("?")) url.search = path.slice(path.indexOf("?"));
  const time = new Date().toISOString();
  const signature = sign(null, Buffer.from(httpSignatureMessage("GET", url.pathname + url.search, time, EMPTY_SHA256)), cp.privateKey).toString("base64");
  let answer;
  try {
    answer = await controlPlaneRequest(url.toString(), {
      headers: { [HTTP_SIGNATURE_HEADERS.node]: cp.nodeId, [HTTP_SIGNATURE_HEADERS.time]: time, [HTTP_SIGNATURE_HEADERS.signature]: signature },
      trust: cp.trust,
      timeoutMs: 120_000,
      maxBytes: MAX_SOURCE_BYTES,
    });
  } catch (err) {
    throw new Error(`source ${path}: cannot fetch it (${(err as Error).message})`);
  }
  if (answer.status !== 200) throw new Error(`source ${path}: HTTP ${answer.status}${answer.body.length < 512 ? ` ${answer.text().trim()}` : ""}`);
  return answer.body;
}

/** An absolute URL is someone else's server: no node signature goes there, and the system's CAs decide. */
async function fetchElsewhere(url: string): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    throw new Error(`source ${url}: cannot fetch it (${(err as Error).message})`);
  }
  if (!res.ok) throw new Error(`source ${url}: HTTP ${res.status}`);
  if (Number(res.headers.get("content-length") ?? 0) > MAX_SOURCE_BYTES) throw new Error(`source ${url}: larger than ${MAX_SOURCE_BYTES} bytes`);
  return Buffer.from(await res.arrayBuffer());
}
