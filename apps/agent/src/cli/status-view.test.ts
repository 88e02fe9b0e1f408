// `mesh-host status` before the daemon has run counts what the store owns, whichever format the
// store is in: a v1 store.json (an older host's) counts as the daemon would read it.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../log";
import { DiskStore } from "../store/disk-store";
import { OWNERSHIP_KEY } from "../store/ownership";
import { tempDirs } from "../testing/temp-dirs";
import { statusView } from "./status";

const freshDir = tempDirs("mesh-status-view-");
const sha = "b".repeat(64);

describe("statusView", () => {
  it("counts the records of a v1 store, less the pending creates", async () => {
    const dir = freshDir();
    const store = new DiskStore(join(dir, "state"));
    await store.init();
    const v1 = {
      format: 1,
      records: [
        { id: "motd", type: "file", path: "/etc/motd", applied: sha },
        { id: "www", type: "directory", path: "/srv/www", applied: sha },
        { id: "new", type: "file", path: "/etc/new", applied: sha, pending: true },
      ],
    };
    await store.write(OWNERSHIP_KEY, JSON.stringify(v1));
    const view = await statusView(store, store.dir, join(dir, "root"), silentLogger());
    expect(view.state).toBe("hosted");
    expect(view.owned).toBe(2);
  });
});
