// Per-test cleanups: what a test starts (a control plane, a host, a temp directory) it pushes here,
// and it is stopped or removed after that test, the last pushed first.
import { afterEach } from "vitest";

export type Cleanup = () => Promise<void> | void;

/** Call at a test file's top level. */
export function cleanupsAfterEach(): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return cleanups;
}
