// Files served by the control plane or another server: streamed into a file the caller
// opened, with a running sha256 and a byte cap, never held whole; the caller renames it only once verified.
import { createHash, sign, type KeyObject } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { HTTP_SIGNATURE_HEADERS, httpSignatureMessage, type RemoteSource } from "@mesh/protocol";
import { endpoint } from "../link/auth";
import { controlPlaneGet } from "../link/control-plane-http";
import type { Trust } from "../link/trust";
import { isoNow, systemClock } from "../clock";
import { wholeFromEnv } from "../env-number";

/** Larger than any file a declaration may carry inline, with room: a cap, not a format. */
const DEFAULT_MAX_SOURCE_BYTES = 512 * 1024 * 1024;
const EMPTY_SHA256 = createHash("sha256").digest("hex");

/** MESH_SOURCE_MAX_BYTES lowers (or raises) the cap; a value that is no whole number of bytes above 0 stops the start, naming it. */
export function maxSourceBytes(env: NodeJS.ProcessEnv = process.env): number {
  return wholeFromEnv(env, "MESH_SOURCE_MAX_BYTES", DEFAULT_MAX_SOURCE_BYTES, { unit: "bytes" });
}

/** What an enrolled host needs to fetch from its control plane. */
export interface ControlPlaneAccess {
  url: string;
  nodeId: string;
  privateKey: KeyObject;
  trust?: Trust;
}

/**
 * Writes a source's bytes into `into` (open, empty) and checks them against the declared sha256;
 * throws past the cap (the download is cut there) or on another sha256. Returns the sha256.
 */
export type SourceFetcher = (source: RemoteSource, into: FileHandle) => Promise<string>;

/** A source's bytes from `from` on: `start` is where the body begins (0 when the server sent it whole). */
export interface SourceBody {
  body: AsyncIterable<Uint8Array>;
  start: number;
}

/** Opens a source at a byte offset (HTTP Range); a server that ignores the range sends it whole. */
export type SourceOpener = (source: RemoteSource, from: number) => Promise<SourceBody>;

export function sourceOpener(controlPlane: ControlPlaneAccess | null, maxBytes = maxSourceBytes()): SourceOpener {
  return async (source, from) => {
    if (/^https?:\/\//.test(source.url)) return openElsewhere(source.url, maxBytes, from);
    if (!controlPlane) throw new Error(`source ${source.url}: this host is not enrolled, so it has no control plane to fetch from`);
    return openSigned(controlPlane, source.url, from);
  };
}

export function sourceFetcher(controlPlane: ControlPlaneAccess | null, maxBytes = maxSourceBytes()): SourceFetcher {
  const open = sourceOpener(controlPlane, maxBytes);
  return async (source, into) => {
    const { body } = await open(source, 0);
    const sha = await copyCapped(body, into, maxBytes, source.url);
    if (sha !== source.sha256) {
      throw new Error(`source ${source.url}: sha256 ${sha.slice(0, 12)}…, declared ${source.sha256.slice(0, 12)}…; not written`);
    }
    return sha;
  };
}

/**
 * Chunk by chunk into the file; leaving the loop early (the cap) cancels the download. `hash` and
 * `size` go on from bytes already in the file (a resumed download).
 */
export async function copyCapped(
  body: AsyncIterable<Uint8Array>,
  into: FileHandle,
  maxBytes: number,
  url: string,
  hash = createHash("sha256"),
  size = 0,
): Promise<string> {
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new Error(`source ${url}: larger than ${maxBytes} bytes; download stopped, not written`);
      hash.update(chunk);
      await into.write(chunk);
    }
  } catch (err) {
    if ((err as Error).message.startsWith(`source ${url}:`)) throw err;
    throw new Error(`source ${url}: download failed (${(err as Error).message})`);
  }
  return hash.digest("hex");
}

/** Where a 206 answer's body starts (Content-Range: bytes N-M/T), or null when it is not the range asked. */
function rangeStart(status: number, contentRange: string | null | undefined, from: number): number | null {
  if (from === 0 || status !== 206) return status === 200 ? 0 : null;
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(contentRange ?? "");
  return m && Number(m[1]) === from ? from : null;
}

const rangeHeader = (from: number): Record<string, string> => (from > 0 ? { range: `bytes=${from}-` } : {});

async function openSigned(cp: ControlPlaneAccess, path: string, from: number): Promise<SourceBody> {
  const url = new URL(endpoint(cp.url, path.split("?")[0]!));
  if (path.includes("?")) url.search = path.slice(path.indexOf("?"));
  const time = isoNow(systemClock);
  const signature = sign(null, Buffer.from(httpSignatureMessage("GET", url.pathname + url.search, time, EMPTY_SHA256)), cp.privateKey).toString("base64");
  let res;
  try {
    res = await controlPlaneGet(url.toString(), {
      headers: {
        [HTTP_SIGNATURE_HEADERS.node]: cp.nodeId,
        [HTTP_SIGNATURE_HEADERS.time]: time,
        [HTTP_SIGNATURE_HEADERS.signature]: signature,
        ...rangeHeader(from),
      },
      trust: cp.trust,
      timeoutMs: 120_000,
    });
  } catch (err) {
    throw new Error(`source ${path}: cannot fetch it (${(err as Error).message})`);
  }
  const start = rangeStart(res.statusCode ?? 0, res.headers["content-range"], from);
  if (start === null) {
    // The control plane's own words, briefly: a reason, never a body to keep.
    let text = "";
    for await (const chunk of res) {
      text += String(chunk);
      if (text.length >= 512) break;
    }
    res.destroy();
    throw new Error(`source ${path}: HTTP ${res.statusCode}${text.length < 512 ? ` ${text.trim()}` : ""}`);
  }
  return { body: res, start };
}

/** An absolute URL is someone else's server: no node signature goes there, and the system's CAs decide. */
async function openElsewhere(url: string, maxBytes: number, from: number): Promise<SourceBody> {
  let res: Response;
  try {
    res = await fetch(url, { headers: rangeHeader(from), signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    throw new Error(`source ${url}: cannot fetch it (${(err as Error).message})`);
  }
  const start = rangeStart(res.status, res.headers.get("content-range"), from);
  if (start === null || !res.body) {
    await res.body?.cancel();
    throw new Error(`source ${url}: HTTP ${res.status}`);
  }
  if (start + Number(res.headers.get("content-length") ?? 0) > maxBytes) {
    await res.body.cancel();
    throw new Error(`source ${url}: larger than ${maxBytes} bytes; not downloaded`);
  }
  return { body: res.body as unknown as AsyncIterable<Uint8Array>, start };
}
