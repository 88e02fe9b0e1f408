// After a rolled-back package upgrade the old binary puts its own version back in dpkg's record
// (apt). That is waited for only a little at the start: a hung apt must never keep the host from
// running and linking; it finishes in the background, and its reinstall is no new binary to start.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait-for";

const BIN = join(__dirname, "..", "..", "dist", "mesh-host.js");
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

describe("mesh-host run after a rolled-back package upgrade", () => {
  it("does not wait for a hung apt-get putting the previous version back: it starts, and apt goes on in the background", async () => {
    const base = mkdtempSync(join(tmpdir(), "mesh-settle-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const root = join(base, "root");
    const state = join(base, "state");
    const bin = join(base, "bin");
    for (const d of [join(root, "etc/apt/sources.list.d"), state, bin]) mkdirSync(d, { recursive: true });
    // apt has a source, so the previous version is asked of it.
    writeFileSync(join(root, "etc/apt/sources.list.d/mesh.list"), "deb http://127.0.0.1:9/apt stable main\n");
    const running = spawnSync(process.execPath, [BIN, "version"], { encoding: "utf8" }).stdout.trim();
    // dpkg still records the failed version; apt-get hangs (a dead mirror, a held lock) and says it ran.
    const aptPid = join(base, "apt-get.pid");
    writeFileSync(join(bin, "dpkg-query"), '#!/bin/sh\nprintf "install ok installed\\t9.9.9\\n"\n', { mode: 0o755 });
    writeFileSync(join(bin, "apt-get"), `#!/bin/sh\necho $$ > "${aptPid}"\nexec sleep 60\n`, { mode: 0o755 });
    cleanups.push(() => {
      if (existsSync(aptPid)) {
        try {
          process.kill(Number(readFileSync(aptPid, "utf8").trim()), "SIGKILL");
        } catch {}
      }
    });
    writeFileSync(
      join(state, "upgrade-failed.json"),
      JSON.stringify({
        from: running,
        to: "9.9.9",
        binary: BIN,
        deadline: new Date().toISOString(),
        trialMs: 1000,
        package: { name: "mesh-host", previous: running },
      }),
    );
    let output = "";
    const child: ChildProcess = spawn(process.execPath, [BIN, "run", "--state-dir", state, "--root", root, "--interval", "1"], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, MESH_LOG_LEVEL: "info", MESH_SETTLE_WAIT_MS: "300" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    cleanups.push(() => child.kill("SIGKILL"));

    await waitFor("apt-get started", () => existsSync(aptPid), 5_000).catch((err) => {
      throw new Error(`${err.message}: ${output}`);
    });
    // Hosted (not enrolled): running, idle, its status written, while apt-get still hangs.
    await waitFor(
      "the host running while apt-get hangs",
      () => existsSync(join(state, "status.json")) && JSON.parse(readFileSync(join(state, "status.json"), "utf8")).state === "hosted",
      5_000,
    );
    expect(output).toMatch(/starting without waiting for it/);
    expect(child.exitCode).toBeNull();
  });
});
