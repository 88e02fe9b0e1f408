// The state store: a few named blobs (identity, key, declaration, ownership,
// status). Small on purpose so that a disk and an in-memory version stay equal.
export interface Store {
  /** The bytes under `key`, or null when there are none. */
  read(key: string): Promise<Buffer | null>;
  /** Replace `key` atomically and durably; the old bytes or the new ones, never a mix. */
  write(key: string, data: string | Buffer, options?: { mode?: number }): Promise<void>;
  /** Move `key` to `aside` (kept for an operator to look at); no-op when absent. */
  setAside(key: string, aside: string): Promise<void>;
  /** Forget `key`; no-op when absent. */
  remove(key: string): Promise<void>;
}

/**
 * Keys are plain file names, or `originals/<name>` for the contents of adopted files, so
 * that the disk store cannot be walked out of its directory.
 */
export function checkKey(key: string): void {
  if (!/^(originals\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(key)) throw new Error(`invalid store key ${JSON.stringify(key)}`);
}
