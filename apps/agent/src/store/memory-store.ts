// The in-memory store: the same contract as the disk store, for tests and for
// injecting faults (a failing write, a garbage blob) without a file system.
import { checkKey, type Store } from "./store";

export class MemoryStore implements Store {
  private readonly blobs = new Map<string, { data: Buffer; mode: number }>();
  /** Set to make the next write fail before anything changes, as a full disk would. */
  failNextWrite: Error | null = null;
  /** Set to make every write fail until cleared, as a full state dir does. */
  full: Error | null = null;

  async read(key: string): Promise<Buffer | null> {
    checkKey(key);
    const blob = this.blobs.get(key);
    return blob ? Buffer.from(blob.data) : null;
  }

  async write(key: string, data: string | Buffer, options?: { mode?: number }): Promise<void> {
    checkKey(key);
    if (this.full) throw this.full;
    if (this.failNextWrite) {
      const err = this.failNextWrite;
      this.failNextWrite = null;
      throw err;
    }
    this.blobs.set(key, { data: Buffer.from(data), mode: options?.mode ?? 0o600 });
  }

  async setAside(key: string, aside: string): Promise<void> {
    checkKey(key);
    checkKey(aside);
    const blob = this.blobs.get(key);
    if (!blob) return;
    this.blobs.set(aside, blob);
    this.blobs.delete(key);
  }

  async remove(key: string): Promise<void> {
    checkKey(key);
    this.blobs.delete(key);
  }

  /** Keys held, for tests that check nothing stray is left behind. */
  keys(): string[] {
    return [...this.blobs.keys()].sort();
  }
}
