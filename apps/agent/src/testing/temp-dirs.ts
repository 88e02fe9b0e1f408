// Temp directories for a test file: made fresh, all removed after the file's tests.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Call at a test file's top level: each call of the result is a new directory, removed in afterAll. */
export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

/** A host's sandbox: `root` (made, empty) for --root and `state` (not made) for --state-dir, under `base`. */
export interface Sandbox {
  base: string;
  root: string;
  state: string;
}

export function sandbox(freshDir: () => string): Sandbox {
  const base = freshDir();
  const root = join(base, "root");
  mkdirSync(root);
  return { base, root, state: join(base, "state") };
}
