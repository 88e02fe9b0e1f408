// Two control planes on one embedded data directory would corrupt it silently:
// the second must refuse with a clear error.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane } from "../harness/control-plane";
import { WEB_DIR } from "../harness/paths";

describe("embedded data directory", () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await ControlPlane.start({ engine: "pglite" });
  });
  afterAll(() => cp?.dispose());

  it("refuses a second control plane on the same directory", () => {
    const env = { ...process.env, MESH_DATA_DIR: cp.options.dataDir!, PORT: "0", NODE_ENV: "production" } as Record<string, string>;
    delete env.DATABASE_URL;
    const r = spawnSync(process.execPath, ["--import", "tsx", "src/server.ts"], { cwd: WEB_DIR, env, encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/data directory .* is in use by process \d+/);
  });
});
