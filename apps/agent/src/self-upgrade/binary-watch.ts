// Whether the file the host runs from is still the one it started from: a package upgrade
// (its own `package` resource, an operator's apt upgrade, unattended-upgrades) renames a new
// file over the path, and the host then reports and exits for the supervisor to start it.
import { promises as fs } from "node:fs";

export interface BinaryIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export async function binaryIdentity(path: string): Promise<BinaryIdentity | null> {
  try {
    const st = await fs.stat(path);
    return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

export function sameBinary(a: BinaryIdentity, b: BinaryIdentity | null): boolean {
  return b !== null && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
