// The service resource with systemd as its manager: PID 1 detection, and the exact systemctl
// sequence through the recording runner. The host's own supervisor is tested in supervisor/.
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ServiceResource } from "@mesh/protocol";
import { RecordingRunner, type ScriptedAnswer } from "../runner/recording-runner";
import {
  applyService,
  declaredServiceState,
  describeServiceDrift,
  observeService,
  removeService,
  restoreService,
  serviceState,
  snapshotService,
  systemdIsPid1,
  type ServiceContext,
} from "./service";
import { systemdManager } from "./service-manager";
import { tempDirs } from "../testing/temp-dirs";

const temp = tempDirs("mesh-svc-");

const UNIT = "web.service";
const V1 = "[Service]\nExecStart=/usr/bin/web --v1\n";
const V2 = "[Service]\nExecStart=/usr/bin/web --v2\n";
const svc = (fields: Partial<ServiceResource> = {}) => ServiceResource.parse({ type: "service", id: "web", unit: UNIT, ...fields });

/** What systemd answers to is-enabled / is-active, one observation after another. */
function systemd(observations: [enabled: string, active: string][], actions: ScriptedAnswer[] = []): RecordingRunner {
  return new RecordingRunner([
    ...observations.flatMap(([enabled, active]): ScriptedAnswer[] => [
      { match: ["systemctl", "is-enabled"], result: { stdout: `${enabled}\n`, code: enabled === "enabled" ? 0 : 1 } },
      { match: ["systemctl", "is-active"], result: { stdout: `${active}\n`, code: active === "active" ? 0 : 3 } },
    ]),
    ...actions,
    // Every action not scripted otherwise succeeds; the recorded argv is what the tests check.
    { match: (argv) => argv[0] === "systemctl" && !argv.some((a) => a.startsWith("is-")), repeat: true },
  ]);
}

/** The commands that change something, without the observations around them. */
const changes = (runner: RecordingRunner) => runner.argvs.filter((a) => !a.some((x) => x === "is-enabled" || x === "is-active"));

describe("which manager", () => {
  it("detects PID 1 from /proc/1/comm", async () => {
    const proc = temp();
    mkdirSync(join(proc, "1"));
    writeFileSync(join(proc, "1/comm"), "systemd\n");
    expect(await systemdIsPid1(proc)).toBe(true);
    writeFileSync(join(proc, "1/comm"), "tini\n");
    expect(await systemdIsPid1(proc)).toBe(false);
    expect(await systemdIsPid1(join(proc, "missing"))).toBe(false);
  });
});

describe("with systemd as PID 1 (recorded systemctl)", () => {
  let unitDir: string;
  const unitFile = () => join(unitDir, UNIT);
  const ctxWith = (runner: RecordingRunner): ServiceContext => ({ root: "/", manager: systemdManager(runner, "/"), unitDir });

  beforeEach(() => {
    unitDir = join(temp(), "system");
  });

  it("creates: writes the unit file, reloads, enables and starts, then observes it", async () => {
    const runner = systemd([
      ["not-found", "inactive"],
      ["enabled", "active"],
    ]);
    const ctx = ctxWith(runner);
    const observed = await observeService(ctx, UNIT);
    expect(observed).toEqual({ unit: UNIT, unitFileSha256: null, enabled: "not-found", active: "inactive" });
    const declared = svc({ content: V1, enabled: true, state: "running" });
    const applied = await applyService(ctx, declared, observed);
    expect(applied.actions).toEqual(["wrote unit file", "daemon-reload", "enable", "start"]);
    expect(changes(runner)).toEqual([
      ["systemctl", "daemon-reload"],
      ["systemctl", "enable", UNIT],
      ["systemctl", "start", UNIT],
    ]);
    expect(runner.argvs.slice(0, 2)).toEqual([
      ["systemctl", "is-enabled", UNIT],
      ["systemctl", "is-active", UNIT],
    ]);
    expect(readFileSync(unitFile(), "utf8")).toBe(V1);
    expect(serviceState(applied.observed, declared)).toEqual(declaredServiceState(declared));
  });

  it("is a no-op when the unit is as declared", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), V1);
    const runner = systemd([
      ["enabled", "active"],
      ["enabled", "active"],
    ]);
    const ctx = ctxWith(runner);
    const applied = await applyService(ctx, svc({ content: V1, enabled: true, state: "running" }), await observeService(ctx, UNIT));
    expect(applied.actions).toEqual([]);
    expect(changes(runner)).toEqual([]);
  });

  it("updates: a new unit file is written, reloaded, and a running service restarted to take it", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), V1);
    const runner = systemd([
      ["enabled", "active"],
      ["enabled", "active"],
    ]);
    const ctx = ctxWith(runner);
    const applied = await applyService(ctx, svc({ content: V2, enabled: true, state: "running" }), await observeService(ctx, UNIT));
    expect(changes(runner)).toEqual([
      ["systemctl", "daemon-reload"],
      ["systemctl", "restart", UNIT],
    ]);
    expect(applied.actions).toEqual(["wrote unit file", "daemon-reload", "restart"]);
    expect(readFileSync(unitFile(), "utf8")).toBe(V2);
  });

  it("sees drift (stopped, disabled, edited behind the host's back) and corrects it", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), "[Service]\nExecStart=/bin/false\n");
    const runner = systemd([
      ["disabled", "failed"],
      ["enabled", "active"],
    ]);
    const ctx = ctxWith(runner);
    const declared = svc({ content: V1, enabled: true, state: "running" });
    const observed = await observeService(ctx, UNIT);
    expect(describeServiceDrift(declared, observed)).toBe("unit file content differs; disabled, declared enabled; failed, declared running");
    expect(serviceState(observed, declared)).not.toEqual(declaredServiceState(declared));
    await applyService(ctx, declared, observed);
    expect(changes(runner)).toEqual([
      ["systemctl", "daemon-reload"],
      ["systemctl", "enable", UNIT],
      ["systemctl", "start", UNIT],
    ]);
  });

  it("stops and disables a unit declared stopped and disabled", async () => {
    const runner = systemd([
      ["enabled", "active"],
      ["disabled", "inactive"],
    ]);
    const ctx = ctxWith(runner);
    await applyService(ctx, svc({ enabled: false, state: "stopped" }), await observeService(ctx, UNIT));
    expect(changes(runner)).toEqual([
      ["systemctl", "disable", UNIT],
      ["systemctl", "stop", UNIT],
    ]);
  });

  it("removes a unit it created: stop, disable, delete the file, reload", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), V1);
    const runner = systemd([
      ["enabled", "active"],
      ["not-found", "inactive"],
    ]);
    const removed = await removeService(ctxWith(runner), svc({ content: V1, enabled: true, state: "running" }));
    expect(changes(runner)).toEqual([
      ["systemctl", "stop", UNIT],
      ["systemctl", "disable", UNIT],
      ["systemctl", "daemon-reload"],
    ]);
    expect(removed.actions).toEqual(["stop", "disable", "deleted unit file", "daemon-reload"]);
    expect(existsSync(unitFile())).toBe(false);
  });

  it("adopts a unit with its own file, then restores file, enablement and state when released", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), V1);
    const runner = systemd([
      ["disabled", "inactive"], // snapshot
      ["disabled", "inactive"], // observe before apply
      ["enabled", "active"], // after apply
      ["enabled", "active"], // restore: now
      ["disabled", "inactive"], // restore: after
    ]);
    const ctx = ctxWith(runner);
    const snapshot = JSON.parse(JSON.stringify(await snapshotService(ctx, UNIT)));
    expect(snapshot).toEqual({ unit: UNIT, unitFile: { kind: "file", content: V1 }, enabled: "disabled", active: "inactive" });

    await applyService(ctx, svc({ content: V2, enabled: true, state: "running" }), await observeService(ctx, UNIT));
    expect(readFileSync(unitFile(), "utf8")).toBe(V2);
    runner.calls.length = 0;

    const restored = await restoreService(ctx, snapshot);
    expect(restored).toMatchObject({ outcome: "restored", actions: ["stop", "disable", "restored unit file", "daemon-reload"] });
    expect(changes(runner)).toEqual([
      ["systemctl", "stop", UNIT],
      ["systemctl", "disable", UNIT],
      ["systemctl", "daemon-reload"],
    ]);
    expect(readFileSync(unitFile(), "utf8")).toBe(V1);
  });

  it("restores a package's unit (no file in /etc) by deleting the override, and puts a mask link back as a link", async () => {
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(unitFile(), V2);
    let runner = systemd([
      ["enabled", "active"],
      ["enabled", "active"],
    ]);
    let restored = await restoreService(ctxWith(runner), { unit: UNIT, unitFile: null, enabled: "enabled", active: "active" });
    expect(restored.actions).toEqual(["deleted unit file", "daemon-reload", "restart"]);
    expect(existsSync(unitFile())).toBe(false);

    runner = systemd([
      ["not-found", "inactive"],
      ["masked", "inactive"],
    ]);
    restored = await restoreService(ctxWith(runner), { unit: UNIT, unitFile: { kind: "symlink", target: "/dev/null" }, enabled: "masked", active: "inactive" });
    expect(restored.outcome).toBe("restored");
    expect(readlinkSync(unitFile())).toBe("/dev/null");
  });

  it("reports a restore that systemd did not follow as approximate, never as done", async () => {
    const runner = systemd([
      ["disabled", "inactive"],
      ["disabled", "failed"],
    ]);
    const restored = await restoreService(ctxWith(runner), { unit: UNIT, unitFile: null, enabled: "disabled", active: "active" });
    expect(restored).toMatchObject({ outcome: "approximate", detail: `${UNIT}: failed, was active` });
  });

  it("throws with systemctl's words when an action fails, and when the unit is not as declared afterwards", async () => {
    let runner = systemd(
      [["enabled", "inactive"]],
      [{ match: ["systemctl", "start"], result: { code: 1, stderr: "Job for web.service failed because the control process exited with error code.\n" } }],
    );
    let ctx = ctxWith(runner);
    await expect(applyService(ctx, svc({ state: "running" }), await observeService(ctx, UNIT))).rejects.toThrow(
      "cannot start web.service: `systemctl start web.service` exited 1: Job for web.service failed",
    );

    runner = systemd([
      ["enabled", "inactive"],
      ["enabled", "failed"],
    ]);
    ctx = ctxWith(runner);
    await expect(applyService(ctx, svc({ state: "running" }), await observeService(ctx, UNIT))).rejects.toThrow(
      "service web.service is not as declared after start: failed, declared running",
    );
  });

  it("reads an older systemd's silent is-enabled for an unknown unit as not-found", async () => {
    const runner = new RecordingRunner([
      { match: ["systemctl", "is-enabled"], result: { code: 1, stderr: "Failed to get unit file state for web.service: No such file or directory\n" } },
      { match: ["systemctl", "is-active"], result: { code: 3, stdout: "inactive\n" } },
    ]);
    expect((await observeService(ctxWith(runner), UNIT)).enabled).toBe("not-found");
  });

  it("never touches the host's own unit (invariant 5)", async () => {
    const runner = systemd([]);
    await expect(
      applyService(ctxWith(runner), svc({ unit: "mesh-host.service", state: "stopped" }), {
        unit: "mesh-host.service",
        unitFileSha256: null,
        enabled: "enabled",
        active: "active",
      }),
    ).rejects.toThrow("mesh-host.service belongs to the host's installation");
    expect(runner.calls).toEqual([]);
  });
});

describe("with systemd as PID 1 under a sandbox root", () => {
  it("manages the unit file and enablement with systemctl --root, never the running manager", async () => {
    const root = temp();
    const runner = new RecordingRunner([
      { match: ["systemctl", `--root=${root}`, "is-enabled"], result: { code: 1, stdout: "disabled\n" } },
      { match: ["systemctl", `--root=${root}`, "enable"] },
      { match: ["systemctl", `--root=${root}`, "is-enabled"], result: { stdout: "enabled\n" } },
    ]);
    const ctx: ServiceContext = { root, manager: systemdManager(runner, root) };
    const observed = await observeService(ctx, UNIT);
    expect(observed.active).toBe("unknown");
    await applyService(ctx, svc({ content: V1, enabled: true }), observed);
    expect(runner.argvs).toEqual([
      ["systemctl", `--root=${root}`, "is-enabled", UNIT],
      ["systemctl", `--root=${root}`, "enable", UNIT],
      ["systemctl", `--root=${root}`, "is-enabled", UNIT],
    ]);
    expect(readFileSync(join(root, "etc/systemd/system", UNIT), "utf8")).toBe(V1);

    await expect(applyService(ctx, svc({ state: "running" }), observed)).rejects.toThrow("a running or stopped state needs --root /");
  });

  it("keeps a symlinked unit as a link in its snapshot", async () => {
    const root = temp();
    mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
    symlinkSync("/dev/null", join(root, "etc/systemd/system", UNIT));
    const runner = new RecordingRunner([{ match: ["systemctl"], result: { stdout: "masked\n" } }]);
    expect(await snapshotService({ root, manager: systemdManager(runner, root) }, UNIT)).toEqual({
      unit: UNIT,
      unitFile: { kind: "symlink", target: "/dev/null" },
      enabled: "masked",
      active: "unknown",
    });
  });
});
