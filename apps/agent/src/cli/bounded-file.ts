// A file the operator named, read once through one handle: checked to be a regular
// file under a size limit, and never read past it, whatever is swapped in by name.
import { constants as fsConstants, promises as fs } from "node:fs";

export type BoundedFile = { ok: true; text: string } | { ok: false; problem: "not a regular file" | "too large" };

export async function readBoundedFile(path: string, maxBytes: number): Promise<BoundedFile> {
  // O_NONBLOCK: a FIFO named here must not hang the command before it is refused.
  const handle = await fs.open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { ok: false, problem: "not a regular file" };
    if (st.size > maxBytes) return { ok: false, problem: "too large" };
    // Read at most one byte past the limit, from this handle: a file that grew since is refused, not read whole.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return { ok: false, problem: "too large" };
    }
    return { ok: true, text: buffer.subarray(0, length).toString("utf8") };
  } finally {
    await handle.close();
  }
}
