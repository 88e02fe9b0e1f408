// The daemon side of bad input: a pushed declaration whose path leaves the root is
// refused as a whole, reported, and the held declaration stays in force (on disk too).
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "./testing/wait-for";
import { linkedHost } from "./testing/linked-host";
import { cleanupsAfterEach } from "./testing/cleanups";

const cleanups = cleanupsAfterEach();

const frame = (version: number, resources: unknown[]) => JSON.stringify({ type: "declaration", declaration: { version, resources } });
const motd = { type: "file", id: "motd", path: "/motd", content: "hello\n" };

describe("host: a pushed declaration refused as a whole", () => {
  it("keeps the last good declaration when a path escapes the root through a symlink", async () => {
    const { cp, host, base, rootDir } = await linkedHost(cleanups, { prefix: "mesh-host-", onConnect: (ws) => ws.send(frame(1, [motd])) });
    const outside = join(base, "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(rootDir, "escape"));
    await host.start();
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1));

    cp.sockets[0]!.send(frame(2, [{ type: "file", id: "evil", path: "/escape/passwd", content: "x" }]));
    const refused = await waitFor("v2 refused", () => cp.reports.find((r) => r.rejectedVersion === 2));
    expect(refused.declarationVersion).toBe(1);
    expect(refused.errors).toEqual([
      { id: null, message: expect.stringMatching(/^declaration v2 rejected: evil: \/escape\/passwd resolves outside the root/) },
    ]);
    expect(refused.owned.map((o) => o.id)).toEqual(["motd"]);
    expect(existsSync(join(outside, "passwd"))).toBe(false);
    expect(readFileSync(join(rootDir, "motd"), "utf8")).toBe("hello\n");
    expect(JSON.parse(readFileSync(join(base, "state", "declaration.json"), "utf8")).version).toBe(1);
  });
});
