// Every kind of Store, for a suite run against each (describe.each): memory, and disk in a fresh
// temp directory per store.
import { join } from "node:path";
import { DiskStore } from "../store/disk-store";
import { MemoryStore } from "../store/memory-store";
import type { Store } from "../store/store";

/** `[name, make]` per kind; `freshDir` (from tempDirs) gives the disk store its directory. */
export function storeKinds(freshDir: () => string): [string, () => Promise<Store>][] {
  return [
    ["memory", async () => new MemoryStore()],
    [
      "disk",
      async () => {
        const dir = freshDir();
        const store = new DiskStore(join(dir, "state"));
        await store.init();
        return store;
      },
    ],
  ];
}
