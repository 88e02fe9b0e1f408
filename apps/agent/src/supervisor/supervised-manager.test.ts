// The host's own service manager where systemd is not PID 1: real `mesh-host supervise`
// processes (dist/mesh-host.js) run real programs under a sandbox root, through whole reconciles.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { reconcile } from "../reconcile/reconcile";
import { MemoryStore } from "../store/memory-store";
import { Root } from "../resources/root";
import { isAlive, readStatus, servicePaths, type ServiceStatus } from "./service-status";
import { supervisedManager } from "./supervised-manager";
import { statusView } from "../cli/status";
import { DiskStore } from "../store/disk-store";
import { waitFor as waitUntil } from "../testing/wait-for";

const HOST = [process.execPath, join(__dirname, "../../dist/mesh-host.js")];
const UNIT = "demo.service";
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));
let root: string;
let store: MemoryStore;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mesh-sup-"));
  temps.push(root);
  store = new MemoryStore();
});
// Whatever a test left running is stopped, so no process outlives the suite.
afterEach(async () => {
  const dir = join(root, "run/mesh-host/services");
  if (!existsSync(dir)) return;
  const manager = supervisedManager({ rootDir: root, command: () => HOST });
  for (const f of readdirSync(dir)) if (f.endsWith(".json")) await manager.act("stop", f.slice(0, -5));
});

const unitText = (service: string, install = "[Install]\nWantedBy=multi-user.target\n") => `[Unit]\nDescription=demo\n[Service]\n${service}\n${install}`;
const svc = (service: string, extra: Record<string, unknown> = {}): ResourceInput =>
  ({ type: "service", id: "demo", unit: UNIT, content: unitText(service), enabled: true, state: "running", ...extra }) as ResourceInput;
const run = (resources: ResourceInput[], version = 1) =>
  reconcile(
    { store, root: new Root(root), log: silentLogger(), enrolled: false, systemdIsPid1: false, hostCommand: HOST },
    { declaration: Declaration.parse({ version, resources }) },
  );
const status = async (unit = UNIT) => (await readStatus(servicePaths(root, unit).status)) as ServiceStatus;
const log = (unit = UNIT) => readFileSync(servicePaths(root, unit).log, "utf8");
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
/** Real processes take their time: a longer wait, polled less often. */
const waitFor = <T>(what: string, check: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 10_000) =>
  waitUntil(what, check, ms, 25);

describe("the host's own supervisor (systemd is not PID 1)", () => {
  it("creates, keeps, restarts on a crash, takes a new definition, stops and removes a service", async () => {
    const first = await run([svc("ExecStart=/bin/sleep 1000\nRestart=always\nRestartSec=0.1")]);
    expect(first.report.errors).toEqual([]);
    expect(first.changes.map((c) => c.kind)).toEqual(["created"]);
    const s1 = await status();
    expect(s1.state).toBe("active");
    expect(cmdline(s1.main!.pid)).toEqual(["/bin/sleep", "1000"]);
    // Enabled the way systemctl enables, so a machine that later boots systemd agrees.
    expect(readlinkSync(join(root, "etc/systemd/system/multi-user.target.wants", UNIT))).toBe(`/etc/systemd/system/${UNIT}`);
    expect(spawnSync("systemctl", [`--root=${root}`, "is-enabled", UNIT], { encoding: "utf8" }).stdout.trim()).toBe("enabled");
    // The supervisor is on its own: another session, so the host's exit or its group's signals leave it running.
    expect(spawnSync("ps", ["-o", "sid=", "-p", String(s1.supervisor.pid)], { encoding: "utf8" }).stdout.trim()).toBe(String(s1.supervisor.pid));

    expect((await run([svc("ExecStart=/bin/sleep 1000\nRestart=always\nRestartSec=0.1")])).changes).toEqual([]);

    process.kill(s1.main!.pid, "SIGKILL");
    const s2 = await waitFor("the restart", async () => {
      const s = await status();
      return s.state === "active" && s.main && s.main.pid !== s1.main!.pid ? s : null;
    });
    expect(s2.restarts).toBe(1);
    expect(s2.supervisor).toEqual(s1.supervisor);

    const changed = await run([svc("ExecStart=/bin/sleep 2000\nRestart=always")], 2);
    expect(changed.report.errors).toEqual([]);
    expect(changed.changes.map((c) => c.kind)).toEqual(["updated"]);
    const s3 = await status();
    expect(cmdline(s3.main!.pid)).toEqual(["/bin/sleep", "2000"]);
    expect(isAlive(s2.main)).toBe(false);

    const stopped = await run([svc("ExecStart=/bin/sleep 2000\nRestart=always", { state: "stopped" })], 3);
    expect(stopped.report.errors).toEqual([]);
    expect((await status()).state).toBe("inactive");
    expect(isAlive(s3.main)).toBe(false);
    expect(isAlive(s3.supervisor)).toBe(false);

    await run([svc("ExecStart=/bin/sleep 2000")], 4);
    const s4 = await status();
    const removed = await run([], 5);
    expect(removed.changes.map((c) => c.kind)).toEqual(["removed"]);
    expect(isAlive(s4.main)).toBe(false);
    expect(existsSync(join(root, "etc/systemd/system", UNIT))).toBe(false);
    expect(existsSync(join(root, "etc/systemd/system/multi-user.target.wants", UNIT))).toBe(false);
  });

  it("a supervisor killed with -9 is noticed, and the next reconcile runs one copy, not two", async () => {
    await run([svc("ExecStart=/bin/sleep 1000")]);
    const before = await status();
    process.kill(before.supervisor.pid, "SIGKILL");
    await waitFor("the supervisor to die", () => !isAlive(before.supervisor));
    const again = await run([svc("ExecStart=/bin/sleep 1000")]);
    expect(again.report.drift.map((d) => d.id)).toEqual(["demo"]);
    const after = await status();
    expect(after.state).toBe("active");
    expect(after.main!.pid).not.toBe(before.main!.pid);
    expect(isAlive(before.main)).toBe(false);
  });

  it("passes Environment, EnvironmentFile, WorkingDirectory and ExecStartPre, and logs the output", async () => {
    mkdirSync(join(root, "etc/demo"), { recursive: true });
    mkdirSync(join(root, "srv/demo"), { recursive: true });
    writeFileSync(join(root, "etc/demo/env"), "FROM_FILE=file\n# a comment\nBOTH=file\n");
    const script = `echo "$GREETING $FROM_FILE $BOTH $(pwd)"; exec sleep 1000`;
    const r = await run([
      svc(
        `Environment="GREETING=hello there" BOTH=unit\nEnvironmentFile=/etc/demo/env\nEnvironmentFile=-/etc/demo/missing\nWorkingDirectory=/srv/demo\nExecStartPre=/bin/echo pre ran\nExecStart=/bin/sh -c '${script}'`,
      ),
    ]);
    expect(r.report.errors).toEqual([]);
    const out = await waitFor("the service's output", () => (log().includes("hello there") ? log() : null));
    expect(out).toContain("pre ran");
    expect(out).toContain(`hello there file file ${join(root, "srv/demo")}`);
  });

  it("a service that keeps crashing is failed after the start limit, with the reason, and reported as drift", async () => {
    const crashing = svc("ExecStart=/bin/sh -c 'exit 3'\nRestart=always\nRestartSec=0.1", { onDrift: "report" });
    // Like systemd's Type=simple, a start succeeds once the program runs; what it does next is observed.
    expect((await run([crashing])).report.errors).toEqual([]);
    const failed = await waitFor("the start limit", async () => ((await status()).state === "failed" ? status() : null));
    expect(failed.result).toMatch(/^start request repeated too quickly \(exited with status 3/);
    expect(failed.restarts).toBe(5);
    expect(await supervisedManager({ rootDir: root, command: () => HOST }).isActive(UNIT)).toBe("failed");
    const onDrift = await run([crashing], 2);
    expect(onDrift.report.drift).toEqual([expect.objectContaining({ id: "demo", description: expect.stringContaining("failed, declared running") })]);
  });

  it("stops a service that ignores SIGTERM by killing it after TimeoutStopSec", async () => {
    await run([svc(`ExecStart=/bin/sh -c 'trap "" TERM; while :; do sleep 0.1; done'\nTimeoutStopSec=0.5`)]);
    const s = await status();
    await supervisedManager({ rootDir: root, command: () => HOST }).act("stop", UNIT);
    expect(isAlive(s.main)).toBe(false);
    expect(log()).toMatch(/still running after TimeoutStopSec; killed/);
  });

  it("runs as User= (from the root's passwd) and runs ExecStop with $MAINPID before signalling", async () => {
    chmodSync(root, 0o755); // mkdtemp makes it 0700: nobody could not reach out/
    mkdirSync(join(root, "etc"));
    writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    const out = join(root, "out");
    mkdirSync(out, { mode: 0o777 });
    chmodSync(out, 0o777);
    await run([
      svc(
        `User=nobody\nExecStart=/bin/sh -c 'echo "$(id -u):$(id -g):$HOME" > ${out}/id; exec sleep 1000'\nExecStop=/bin/sh -c 'echo "stop $MAINPID" > ${out}/stop'`,
      ),
    ]);
    const s = await status();
    expect(await waitFor("the id file", () => existsSync(join(out, "id")) && readFileSync(join(out, "id"), "utf8"))).toBe("65534:65534:/nonexistent\n");
    await supervisedManager({ rootDir: root, command: () => HOST }).act("stop", UNIT);
    expect(readFileSync(join(out, "stop"), "utf8")).toBe(`stop ${s.main!.pid}\n`);
  });

  it("a stop while ExecStartPre runs ends the start there: the main process never runs", async () => {
    await run([svc("ExecStartPre=/bin/sleep 30\nExecStart=/bin/sleep 1000", { state: undefined })]);
    const manager = supervisedManager({ rootDir: root, command: () => HOST });
    const starting = manager.act("start", UNIT);
    const pre = await waitFor("ExecStartPre to run", async () => {
      const s = existsSync(servicePaths(root, UNIT).status) ? await status() : null;
      return s?.state === "activating" ? s : null;
    });
    await manager.act("stop", UNIT);
    await starting;
    const after = await status();
    expect(after.state).toBe("inactive");
    expect(after.main).toBeNull();
    expect(isAlive(pre.supervisor)).toBe(false);
    expect(log()).not.toMatch(/started pid/);
    // ExecStartPre ended on the stop signal; it was not left to finish or killed after TimeoutStopSec.
    expect(log()).toMatch(/SIGTERM: stopping/);
    expect(log()).not.toMatch(/still running after TimeoutStopSec/);
  });

  it("ExecStop that ends the main process: its workers in the group are stopped at once, not after TimeoutStopSec", async () => {
    await run([svc(`ExecStart=/bin/sh -c '/bin/sleep 1000 & exec /bin/sleep 1001'\nExecStop=/bin/sh -c 'kill $MAINPID'\nTimeoutStopSec=30`)]);
    const s = await status();
    await supervisedManager({ rootDir: root, command: () => HOST }).act("stop", UNIT);
    // The workers went on the stop signal, not on the SIGKILL that follows TimeoutStopSec.
    expect(log()).not.toMatch(/still running after TimeoutStopSec/);
    expect(spawnSync("pgrep", ["-g", String(s.main!.pid)]).status).toBe(1); // no process left in the group
  });

  it("a oneshot that remained runs its ExecStop (its teardown) when stopped", async () => {
    const mark = join(root, "torn-down");
    await run([svc(`Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\nExecStop=/bin/touch ${mark}`)]);
    await supervisedManager({ rootDir: root, command: () => HOST }).act("stop", UNIT);
    expect(existsSync(mark)).toBe(true);
  });

  it("a command that cannot even be spawned fails the start, and the supervisor exits", async () => {
    const r = await run([svc('ExecStart=/bin/echo "a\\x00b"')]);
    expect(r.report.errors).toEqual([{ id: "demo", message: expect.stringMatching(/failed to start: cannot run \/bin\/echo/) }]);
    const s = await status();
    await waitFor("the supervisor to exit", () => !isAlive(s.supervisor));
  });

  it("refuses [Install] targets that are paths, and a log that is a planted symlink", async () => {
    const r = await run([svc("ExecStart=/bin/sleep 1000", { content: unitText("ExecStart=/bin/sleep 1000", "[Install]\nWantedBy=../../../../tmp/x\n") })]);
    expect(r.report.errors).toEqual([{ id: "demo", message: expect.stringContaining("which is not a unit name") }]);
    const victim = join(root, "victim");
    writeFileSync(victim, "keep me\n");
    mkdirSync(join(root, "var/log/mesh-host"), { recursive: true });
    symlinkSync(victim, servicePaths(root, UNIT).log);
    const again = await run([svc("ExecStart=/bin/sleep 1000", { enabled: undefined })], 2);
    expect(again.report.errors).toEqual([{ id: "demo", message: expect.stringContaining("is a symlink; refusing to write a service's log through it") }]);
    expect(readFileSync(victim, "utf8")).toBe("keep me\n");
  });

  it.skipIf(process.getuid?.() !== 0)("never writes a unit file or a service's log through a symlink a non-root user planted on the way", async () => {
    // ROOT/etc and ROOT/var/log handed to a user, who points systemd/ and mesh-host/ at a directory of root's.
    const victim = join(root, "victim");
    mkdirSync(victim, { mode: 0o700 });
    for (const [dir, link] of [
      ["etc", "etc/systemd"],
      ["var/log", "var/log/mesh-host"],
    ] as const) {
      mkdirSync(join(root, dir), { recursive: true });
      chownSync(join(root, dir), 65534, 65534);
      symlinkSync(victim, join(root, link));
    }
    const r = await run([svc("ExecStart=/bin/sleep 1000")]);
    expect(r.report.errors).toEqual([
      { id: "demo", message: expect.stringMatching(/\/etc\/systemd is a symlink in a directory owned by uid 65534; not followed/) },
    ]);
    // The unit file written by hand, the log is next: still refused, and nothing lands in root's directory.
    rmSync(join(root, "etc/systemd"));
    mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
    writeFileSync(join(root, "etc/systemd/system", UNIT), unitText("ExecStart=/bin/sleep 1000"));
    const again = await run([svc("ExecStart=/bin/sleep 1000", { enabled: undefined })], 2);
    expect(again.report.errors).toEqual([
      { id: "demo", message: expect.stringMatching(/\/var\/log\/mesh-host is a symlink in a directory owned by uid 65534; not followed/) },
    ]);
    expect(readdirSync(victim)).toEqual([]);
  });

  it("MESH_SERVICE_MANAGER chooses the manager over PID 1, and a bad value fails the service clearly", async () => {
    const byEnv = (value: string) => {
      process.env.MESH_SERVICE_MANAGER = value;
      return reconcile(
        { store, root: new Root(root), log: silentLogger(), enrolled: false, hostCommand: HOST },
        { declaration: Declaration.parse({ version: 1, resources: [svc("ExecStart=/bin/sleep 1000")] }) },
      ).finally(() => delete process.env.MESH_SERVICE_MANAGER);
    };
    expect((await byEnv("mesh-host")).report.errors).toEqual([]);
    expect((await status()).state).toBe("active");
    expect((await byEnv("upstart")).report.errors).toEqual([{ id: "demo", message: "MESH_SERVICE_MANAGER=upstart: expected systemd, mesh-host or auto" }]);
  });

  it("runs an instance from its template with %i, and mesh-host status lists what it runs", async () => {
    mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
    writeFileSync(join(root, "etc/systemd/system/worker@.service"), "[Service]\nExecStart=/bin/sleep 10%i\n[Install]\nWantedBy=multi-user.target\n");
    const r = await run([{ type: "service", id: "w", unit: "worker@42.service", enabled: true, state: "running" } as ResourceInput]);
    expect(r.report.errors).toEqual([]);
    const s = await status("worker@42.service");
    expect(cmdline(s.main!.pid)).toEqual(["/bin/sleep", "1042"]);
    expect(readlinkSync(join(root, "etc/systemd/system/multi-user.target.wants/worker@42.service"))).toBe("/etc/systemd/system/worker@.service");
    const manager = supervisedManager({ rootDir: root, command: () => HOST });
    await expect(manager.act("start", "worker@.service")).rejects.toThrow("is a template; run an instance of it, such as worker@NAME.service");

    const state = mkdtempSync(join(tmpdir(), "mesh-sup-state-"));
    temps.push(state);
    const view = await statusView(new DiskStore(state), state, root, silentLogger());
    expect(view.services).toEqual([expect.objectContaining({ unit: "worker@42.service", state: "active", pid: s.main!.pid, restarts: 0 })]);
  });

  it("refuses a unit it cannot run, clearly, and starts nothing", async () => {
    const r = await run([svc("Type=forking\nPIDFile=/run/demo.pid\nExecStart=/usr/sbin/demo")]);
    expect(r.report.errors).toEqual([{ id: "demo", message: expect.stringMatching(/Type=forking is not supported/) }]);
    expect(existsSync(servicePaths(root, UNIT).status)).toBe(false);
    const missing = await run([svc("ExecStart=/nonexistent/program")], 2);
    expect(missing.report.errors).toEqual([{ id: "demo", message: expect.stringMatching(/cannot run \/nonexistent\/program/) }]);
  });

  it("a oneshot with RemainAfterExit counts as running once it has run", async () => {
    const r = await run([svc(`Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'echo once >> ${join(root, "ran")}'`)]);
    expect(r.report.errors).toEqual([]);
    expect((await status()).state).toBe("active");
    expect((await run([svc(`Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'echo once >> ${join(root, "ran")}'`)])).changes).toEqual([]);
    expect(readFileSync(join(root, "ran"), "utf8")).toBe("once\n");
  });
});
