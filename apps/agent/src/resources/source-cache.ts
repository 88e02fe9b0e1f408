// Sources downloaded ahead of applying, several at once, into a folder of the state dir, and
// resumed (HTTP Range) where a dropped connection cut them: over a slow, lossy link a 300-file
// apply waits for its slowest downloads together rather than for each in turn. Only a download
// whose sha256 matched is used; the machine changes in the apply, in order, as before.
import { createHash } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { RemoteSource } from "@mesh/protocol";
import { copyCapped, type SourceFetcher, type SourceOpener } from "./file-source";

/** Downloads at once, ahead of the apply. */
export const SOURCE_CONCURRENCY = 8;
/** Connections one download may take, each resuming where the last one was cut. */
const CONNECTIONS_PER_SOURCE = 5;

export class SourceCache {
  /** One download per sha256 at a time: the prefetch and the apply share it. */
  private readonly downloads = new Map<string, Promise<string>>();

  constructor(
    private readonly dir: string,
    private readonly open: SourceOpener,
    private readonly maxBytes: number,
  ) {}

  /**
   * Fetches these sources, SOURCE_CONCURRENCY at a time; a failure is left for the apply, which
   * asks again and says why in its error.
   */
  async prefetch(sources: readonly RemoteSource[], concurrency = SOURCE_CONCURRENCY): Promise<void> {
    const queue = [...new Map(sources.map((s) => [s.sha256, s])).values()];
    const worker = async () => {
      for (let source = queue.shift(); source; source = queue.shift()) await this.download(source).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  }

  /** The fetcher the providers use: from the cache, downloading (resumably) what it does not hold. */
  fetcher(): SourceFetcher {
    return async (source, into) => {
      const path = await this.download(source);
      return copyCapped(createReadStream(path), into, this.maxBytes, source.url);
    };
  }

  /**
   * Drops the finished downloads (applied now, or not needed); partial ones stay to be resumed,
   * unless `declared` (the sha256s still declared) is given: then only theirs stay.
   */
  async settle(declared?: Iterable<string>): Promise<void> {
    const keep = declared ? new Set([...declared].map((sha) => `${sha}.part`)) : null;
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const partial = name.endsWith(".part");
      if (keep ? !keep.has(name) : !partial) await fs.rm(join(this.dir, name), { force: true });
    }
  }

  private download(source: RemoteSource): Promise<string> {
    let running = this.downloads.get(source.sha256);
    if (!running) {
      running = this.fetchVerified(source).finally(() => {
        if (this.downloads.get(source.sha256) === running) this.downloads.delete(source.sha256);
      });
      this.downloads.set(source.sha256, running);
    }
    return running;
  }

  /** `<sha>` once its bytes matched; `<sha>.part` while they come, kept across connections. */
  private async fetchVerified(source: RemoteSource): Promise<string> {
    const done = join(this.dir, source.sha256);
    if (await exists(done)) return done;
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const part = `${done}.part`;
    let lastError: unknown;
    for (let connection = 0; connection < CONNECTIONS_PER_SOURCE; connection++) {
      let sha: string;
      try {
        // What an earlier connection brought is hashed first, so the new one only appends.
        const fh = await fs.open(part, "a+", 0o600);
        try {
          const have = (await fh.stat()).size;
          let hash = await hashOf(fh, have);
          const { body, start } = await this.open(source, have);
          if (start === 0 && have > 0) {
            // The server sent it whole (no Range): start the file again.
            await fh.truncate(0);
            hash = createHash("sha256");
          }
          sha = await copyCapped(body, fh, this.maxBytes, source.url, hash, start);
          await fh.sync();
        } finally {
          await fh.close();
        }
      } catch (err) {
        lastError = err;
        // Only a cut connection is worth another (resumed): a refusal or the cap stay what they are.
        if (/download failed|cannot fetch it/.test((err as Error).message)) continue;
        await fs.rm(part, { force: true });
        break;
      }
      if (sha !== source.sha256) {
        await fs.rm(part, { force: true });
        throw new Error(`source ${source.url}: sha256 ${sha.slice(0, 12)}…, declared ${source.sha256.slice(0, 12)}…; not written`);
      }
      await fs.rename(part, done);
      return done;
    }
    throw lastError;
  }
}

async function exists(path: string): Promise<boolean> {
  return fs.stat(path).then(
    () => true,
    () => false,
  );
}

/** The sha256 of a partial file's first `length` bytes, to go on from. */
async function hashOf(fh: FileHandle, length: number) {
  const hash = createHash("sha256");
  const buf = Buffer.alloc(Math.min(length, 1 << 20) || 1);
  for (let at = 0; at < length; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, length - at), at);
    if (bytesRead === 0) throw new Error("partial download shrank while read");
    hash.update(buf.subarray(0, bytesRead));
    at += bytesRead;
  }
  return hash;
}
