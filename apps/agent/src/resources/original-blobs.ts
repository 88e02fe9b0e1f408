// The contents of adopted files, kept under the state dir as originals/<sha256>
// (written durably before the adopt intent), and checked when read back.
import type { Store } from "../store/store";
import { sha256Hex } from "./observed";
import { STATE_DIR_NAMES } from "../state-dir/keys";

export class OriginalBlobs {
  constructor(private readonly store: Store) {}

  static key(sha256: string): string {
    return `${STATE_DIR_NAMES.originals}/${sha256}`;
  }

  async put(content: Buffer): Promise<string> {
    const sha = sha256Hex(content);
    await this.store.write(OriginalBlobs.key(sha), content);
    return sha;
  }

  async get(sha256: string): Promise<Buffer> {
    const data = await this.store.read(OriginalBlobs.key(sha256));
    if (!data) throw new Error(`the original content ${sha256.slice(0, 12)}… is missing from the state dir; cannot restore`);
    if (sha256Hex(data) !== sha256) throw new Error(`the original content ${sha256.slice(0, 12)}… in the state dir is damaged; cannot restore`);
    return data;
  }

  async drop(sha256: string): Promise<void> {
    await this.store.remove(OriginalBlobs.key(sha256));
  }
}
