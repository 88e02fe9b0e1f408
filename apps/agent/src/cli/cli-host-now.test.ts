// The built mesh-host as an operator runs it, for issue 13's host side: `mesh-host reconcile` asks the
// running daemon (and says what to do when none runs), `enrol --force` refuses while a daemon holds the
// state dir, bad flags get a suggestion and the command's usage, and a URL that is not a Mesh control
// plane is said in words.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeControlPlane } from "../link/fake-control-plane";
import { startMotdControlPlane } from "../testing/motd-control-plane";
import { waitFor } from "../testing/wait-for";
import { tempDirs } from "../testing/temp-dirs";

const BIN = join(__dirname, "..", "..", "dist", "mesh-host.js");
const freshDir = tempDirs("mesh-now-cli-");

let root: string;
let state: string;
beforeEach(() => {
  const base = freshDir();
  root = join(base, "root");
  state = join(base, "state");
  mkdirSync(root);
});

function host(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "--state-dir", state, "--root", root], {
      env: { ...process.env, MESH_LOG_LEVEL: "warn" },
      timeout: 20_000,
    });
    child.stdin.end();
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("bad flags", () => {
  it("names the unknown option, suggests the one meant, and shows that command's usage only", async () => {
    const r = await host("enrol", "http://127.0.0.1:1", "--tokn", "x");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mesh-host: unknown option --tokn \(did you mean --token\?\)\nusage: mesh-host enrol URL \(--token T/);
    expect(r.stderr).not.toMatch(/ERR_PARSE_ARGS|To specify a positional argument|commands:/);
    const s = await host("status", "--jsn");
    expect(s.stderr).toBe(
      "mesh-host: unknown option --jsn (did you mean --json?)\nusage: mesh-host status [--json]                 hosted or enrolled, and what was last reconciled\n",
    );
    const far = await host("status", "--frobnicate");
    expect(far.stderr).toMatch(/^mesh-host: unknown option --frobnicate\nusage: mesh-host status/);
    const missing = await host("enrol", "http://127.0.0.1:1", "--token");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^mesh-host: option --token needs a value\nusage: mesh-host enrol/);
  });
});

describe("a URL that is not a Mesh control plane", () => {
  it("a 404 on the enrol path, and https against a plain http server, are said in words", async () => {
    const web = createServer((_req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<!doctype html><h1>Not Found</h1>"));
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    const port = (web.address() as AddressInfo).port;
    try {
      const r = await host("enrol", `http://127.0.0.1:${port}`, "--token", "good", "--insecure");
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n").pop()).toBe(
        `enrol failed: http://127.0.0.1:${port} does not look like a Mesh control plane: /api/enrol answered HTTP 404 with an HTML page. Check the URL (the dashboard's Add machines page shows the command to copy).`,
      );
      const tls = await host("enrol", `https://127.0.0.1:${port}`, "--token", "good", "--insecure");
      expect(tls.code).toBe(1);
      expect(tls.stderr.trim().split("\n").pop()).toMatch(
        new RegExp(
          `^enrol failed: cannot reach https://127\\.0\\.0\\.1:${port}: 127\\.0\\.0\\.1:${port} does not speak TLS: is it a plain http server\\? Try the URL with http://`,
        ),
      );
    } finally {
      await new Promise<void>((r) => web.close(() => r()));
    }
  });
});

describe("with a daemon", () => {
  let cp: FakeControlPlane;
  let daemon: ChildProcess | null = null;
  beforeEach(async () => {
    cp = await startMotdControlPlane();
  });
  afterEach(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill("SIGKILL");
    daemon = null;
    await cp.close();
  });
  const startDaemon = () => {
    const child = spawn(process.execPath, [BIN, "run", "--state-dir", state, "--root", root, "--interval", "60"], {
      env: { ...process.env, MESH_LOG_LEVEL: "info" },
    });
    let log = "";
    child.stderr!.on("data", (c: Buffer) => (log += c.toString()));
    daemon = child;
    return { child, log: () => log };
  };
  const stop = async (child: ChildProcess) => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    return exited;
  };

  it("mesh-host reconcile with no daemon says so and what to run instead", async () => {
    const r = await host("reconcile");
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `no mesh-host daemon is running on the state dir ${state}: nothing to ask. Start it (\`systemctl start mesh-host\` or \`mesh-host run\`), or reconcile a local declaration once with \`mesh-host apply --file F\`.`,
    );
  });

  it("mesh-host reconcile asks the running daemon, waits for that reconcile and prints its result; a hosted daemon says there is nothing to reconcile", async () => {
    const hosted = startDaemon();
    await waitFor("the hosted line", () => /not enrolled \(hosted\)/.test(hosted.log()), 10_000);
    const idle = await host("reconcile");
    expect(idle.code).toBe(1);
    expect(idle.stderr.trim()).toMatch(/^the daemon did not reconcile: this machine is not enrolled \(hosted\)/);
    expect(await stop(hosted.child)).toBe(0);

    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    const d = startDaemon();
    await waitFor("the report of v1", () => cp.reports.find((rep) => rep.declarationVersion === 1 && rep.owned.length === 1), 10_000);
    const before = cp.reports.length;
    const r = await host("reconcile");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^declaration v1: 0 created, 0 adopted, 0 updated, 0 removed, 0 restored, 0 released, 1 unchanged, 0 errors, 0 skipped; 1 owned\n$/,
    );
    // Reported to the control plane as after any reconcile.
    await waitFor("its report", () => cp.reports.length > before, 5_000);
    expect(d.log()).toMatch(/"msg":"reconcile asked for"/);
    const json = await host("reconcile", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ declarationVersion: 1, drift: [], errors: [] });
    expect(readFileSync(join(root, "motd"), "utf8")).toBe("hi\n");
    expect(await stop(d.child)).toBe(0);
  });

  it("enrol --force refuses while a daemon holds the state dir, naming its pid; nothing is sent", async () => {
    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    const d = startDaemon();
    await waitFor("the report of v1", () => cp.reports.find((rep) => rep.declarationVersion === 1), 10_000);
    const r = await host("enrol", cp.url, "--token", "good", "--insecure", "--force");
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").pop()).toBe(
      `enrol refused: a mesh-host (pid ${d.child.pid}) is running on the state dir ${state} with node ${cp.nodeId}'s key, and would keep it. Stop it first (\`systemctl stop mesh-host\`), enrol again, then start it. Nothing was sent.`,
    );
    expect(cp.enrolments).toHaveLength(1);
    expect(await stop(d.child)).toBe(0);
    // Stopped: the same command goes through.
    expect((await host("enrol", cp.url, "--token", "good", "--insecure", "--force")).code).toBe(0);
  });
});
