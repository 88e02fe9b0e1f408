// Content-addressed files for file and package sources: an operator uploads,
// hosts download by sha256 (and check it again before use).
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { blobs } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";

export const BLOB_MAX_BYTES = 64 * 1024 * 1024;

export async function putBlob(deps: Deps, opts: { actor: string; data: Buffer }) {
  if (opts.data.length > BLOB_MAX_BYTES) throw new MeshError("TOO_LARGE", `files over ${BLOB_MAX_BYTES} bytes are not accepted`);
  const sha256 = createHash("sha256").update(opts.data).digest("hex");
  await deps.db.insert(blobs).values({ sha256, size: opts.data.length, data: opts.data }).onConflictDoNothing();
  await recordEvent(deps.db, { actor: opts.actor, action: "file.upload", target: `file:${sha256}`, data: { size: opts.data.length } });
  return { sha256, size: opts.data.length, url: `/api/files/${sha256}` };
}

export async function getBlobOrThrow(deps: Pick<Deps, "db">, sha256: string): Promise<Buffer> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new MeshError("BAD_INPUT", "a file is named by its sha256 in lower-case hex");
  const [row] = await deps.db.select({ data: blobs.data }).from(blobs).where(eq(blobs.sha256, sha256));
  if (!row) throw new MeshError("NOT_FOUND", `no file with sha256 ${sha256}`);
  return Buffer.from(row.data);
}
