// The `file` resource: content and mode. Written as temp file, fsync, rename,
// so a reader never sees half a file; a symlink at the path is replaced, not followed.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { FileResource } from "@mesh/protocol";
import { normaliseMode, sha256Hex, type ObservedState } from "./observed";
import type { RemoveOutcome, ResourceProvider } from "./provider";

export function fileContent(resource: FileResource): Buffer {
  return Buffer.from(resource.content, resource.encoding === "base64" ? "base64" : "utf8");
}

export const fileProvider: ResourceProvider<FileResource> = {
  type: "file",

  declared(resource) {
    return { type: "file", path: resource.path, mode: normaliseMode(resource.mode), sha256: sha256Hex(fileContent(resource)) };
  },

  async apply(resource, hostPath, observed) {
    if (observed && observed.type !== "file" && observed.type !== "symlink") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a file`);
    }
    const want = this.declared(resource) as Extract<ObservedState, { type: "file" }>;
    const mode = parseInt(want.mode, 8);
    if (observed?.type === "file" && observed.sha256 === want.sha256) {
      if (observed.mode !== want.mode) await fs.chmod(hostPath, mode);
      return;
    }
    await writeFileAtomically(hostPath, fileContent(resource), mode, resource.path);
  },

  async remove(hostPath, path): Promise<RemoveOutcome> {
    let st;
    try {
      st = await fs.lstat(hostPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
      throw err;
    }
    // A directory now stands where the host's file was: it is not the host's to take.
    if (st.isDirectory()) return { kind: "kept", reason: `${path} is a directory now, not the file the host owned; left in place` };
    await fs.unlink(hostPath);
    return { kind: "removed" };
  },
};

async function writeFileAtomically(hostPath: string, content: Buffer, mode: number, path: string): Promise<void> {
  const dir = dirname(hostPath);
  const temp = join(dir, `.${basename(hostPath)}.mesh-${randomBytes(6).toString("hex")}`);
  let fh;
  try {
    fh = await fs.open(temp, "wx", mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new Error(`parent directory of ${path} does not exist (declare it as a directory resource)`);
    }
    throw err;
  }
  try {
    await fh.writeFile(content);
    await fh.chmod(mode);
    await fh.sync();
    await fh.close();
    await fs.rename(temp, hostPath);
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw err;
  }
  const dh = await fs.open(dir, "r");
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
