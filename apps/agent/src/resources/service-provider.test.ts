// The service provider through whole reconciles, with the real systemctl on a sandbox
// root (unit files and enablement; running state needs --root /): create, no-op, update, drift, adopt/restore, remove.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { reconcile } from "../reconcile/reconcile";
import { MemoryStore } from "../store/memory-store";
import { Root } from "./root";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-svc-");
let root: string;
let store: MemoryStore;
beforeEach(() => {
  root = freshDir();
  mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
  store = new MemoryStore();
});

const UNIT = "mesh-demo.service";
const unitText = (cmd: string) => `[Unit]\nDescription=demo\n[Service]\nExecStart=${cmd}\n[Install]\nWantedBy=multi-user.target\n`;
const web = (extra: Record<string, unknown> = {}): ResourceInput =>
  ({ type: "service", id: "web", unit: UNIT, content: unitText("/bin/true"), enabled: true, ...extra }) as ResourceInput;
const run = (resources: ResourceInput[], version = 1) =>
  reconcile(
    { store, root: new Root(root), log: silentLogger(), enrolled: false, systemdIsPid1: true },
    { declaration: Declaration.parse({ version, resources }) },
  );
const systemctl = (...args: string[]) => spawnSync("systemctl", [`--root=${root}`, ...args], { encoding: "utf8" });
const enabled = () => systemctl("is-enabled", UNIT).stdout.trim();
const unitFile = () => join(root, "etc/systemd/system", UNIT);

describe("service provider through reconcile (real systemctl --root)", () => {
  it("creates, is a no-op, updates, and removes what it made", async () => {
    const first = await run([web()]);
    expect(first.report.errors).toEqual([]);
    expect(first.changes.map((c) => c.kind)).toEqual(["created"]);
    expect(enabled()).toBe("enabled");
    expect((await run([web()])).changes).toEqual([]);
    const updated = await run([web({ content: unitText("/bin/false") })], 2);
    expect(updated.changes.map((c) => c.kind)).toEqual(["updated"]);
    expect(readFileSync(unitFile(), "utf8")).toContain("/bin/false");
    const gone = await run([], 3);
    expect(gone.changes.map((c) => c.kind)).toEqual(["removed"]);
    expect(existsSync(unitFile())).toBe(false);
  });

  it("drift: corrects a unit disabled behind its back, or only reports it", async () => {
    await run([web()]);
    systemctl("disable", UNIT);
    const corrected = await run([web()]);
    expect(corrected.report.drift).toEqual([
      expect.objectContaining({ id: "web", type: "service", description: "disabled, declared enabled", corrected: true }),
    ]);
    expect(enabled()).toBe("enabled");
    systemctl("disable", UNIT);
    for (let i = 0; i < 2; i++) {
      const reported = await run([web({ onDrift: "report" })]);
      expect(reported.report.drift).toEqual([expect.objectContaining({ id: "web", corrected: false })]);
    }
    expect(enabled()).toBe("disabled");
  });

  it("adopts a unit that stood there disabled, and puts back its file and enablement when it leaves", async () => {
    writeFileSync(unitFile(), unitText("/usr/bin/original"));
    expect(enabled()).toBe("disabled");
    const adopted = await run([web()]);
    expect(adopted.changes.map((c) => c.kind)).toEqual(["adopted"]);
    expect(adopted.report.owned).toEqual([expect.objectContaining({ id: "web", adopted: true })]);
    expect(enabled()).toBe("enabled");
    const left = await run([], 2);
    expect(left.report.errors).toEqual([]);
    expect(left.changes.map((c) => c.kind)).toEqual(["restored"]);
    expect(readFileSync(unitFile(), "utf8")).toContain("/usr/bin/original");
    expect(enabled()).toBe("disabled");
  });
});
