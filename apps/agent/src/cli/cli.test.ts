// The built dist/mesh-host.js run as a child process, as an operator runs it:
// apply, enrol, status, and the daemon (hosted idle, then enrolled and linked).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPublicKey, verify } from "node:crypto";
import { replacementProofMessage } from "@mesh/protocol";
import type { FakeControlPlane } from "../link/fake-control-plane";
import { startMotdControlPlane } from "../testing/motd-control-plane";
import { waitFor } from "../testing/wait-for";
import { sandbox, tempDirs } from "../testing/temp-dirs";

const BIN = join(__dirname, "..", "..", "dist", "mesh-host.js");
const freshDir = tempDirs("mesh-cli-");

let base: string;
let root: string;
let state: string;
beforeEach(() => {
  ({ base, root, state } = sandbox(freshDir));
});

/** Run the bundle to completion; async, because the fake control plane lives in this process. */
function host(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return hostWithInput(null, ...args);
}

/** As host(), with `input` written to its standard input (null: stdin closed at once). */
function hostWithInput(input: string | null, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "--state-dir", state, "--root", root], {
      env: { ...process.env, MESH_LOG_LEVEL: "warn" },
      timeout: 20_000,
    });
    child.stdin.end(input ?? undefined);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function declarationFile(body: unknown): string {
  const f = join(base, `decl-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, typeof body === "string" ? body : JSON.stringify(body));
  return f;
}

describe("mesh-host apply", () => {
  it("applies a good declaration and says what it did", async () => {
    const f = declarationFile({
      version: 1,
      resources: [
        { type: "directory", id: "site-dir", path: "/srv/site", mode: "0755" },
        { type: "file", id: "index", path: "/srv/site/index.html", content: "<h1>hello</h1>\n", mode: "0644" },
        { type: "directory", id: "srv", path: "/srv" },
      ],
    });
    const r = await host("apply", "--file", f);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/declaration v1: 3 created, 0 adopted, 0 updated, 0 removed, 0 restored, 0 released, 0 unchanged, 0 errors, 0 skipped; 3 owned/);
    expect(readFileSync(join(root, "srv/site/index.html"), "utf8")).toBe("<h1>hello</h1>\n");
    const again = await host("apply", "--file", f, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ declarationVersion: 1, drift: [], errors: [], storeLost: false });
  });

  it("exits 2 naming the bad field", async () => {
    const r = await host("apply", "--file", declarationFile({ version: 1, resources: [{ type: "file", id: "x", path: "etc/x", content: "" }] }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/resources\.0\.path: must be absolute/);
    expect(existsSync(join(state, "store.json"))).toBe(false);
  });

  it("exits 2 on a file that is not JSON, a missing file and a missing --file", async () => {
    expect((await host("apply", "--file", declarationFile("{ nope"))).stderr).toMatch(/not valid JSON/);
    const missing = await host("apply", "--file", join(base, "missing.json"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing\.json: cannot read it \(ENOENT\)/);
    const none = await host("apply");
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--file F is required/);
  });

  it("exits 1 when a resource fails", async () => {
    const r = await host("apply", "--file", declarationFile({ version: 1, resources: [{ type: "file", id: "f", path: "/no/dir/f", content: "x" }] }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error f: parent directory of \/no\/dir\/f does not exist/);
  });
});

describe("mesh-host usage", () => {
  it("version prints the package version", async () => {
    const r = await host("version");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")).version);
  });

  it("exits 2 on an unknown command, an unknown flag and a bad --interval", async () => {
    expect((await host("frobnicate")).code).toBe(2);
    expect((await host("status", "--bogus")).code).toBe(2);
    const r = await host("run", "--interval", "soon");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--interval soon/);
  });

  it("supervise takes only a .service unit name, never a path", async () => {
    for (const unit of ["../../etc/passwd.service", "web.timer", ""]) {
      const r = await host("supervise", "--unit", unit);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/supervise: --unit needs a \.service unit name/);
    }
  });

  it("status says hosted before enrolment", async () => {
    const r = await host("status", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: "hosted", nodeId: null, controlPlaneUrl: null, declarationVersion: 0, owned: 0 });
    expect((await host("status")).stdout).toMatch(/^state: hosted/);
  });
});

describe("mesh-host enrol and run", () => {
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

  it("refuses a bad token with the control plane's message", async () => {
    const r = await host("enrol", cp.url, "--token", "wrong", "--insecure");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^mesh-host: WARNING: enrolling with --insecure: plain http sends the token/);
    expect(r.stderr.trim().split("\n").pop()).toBe("enrol refused: token is invalid or expired");
    expect(existsSync(join(state, "identity.json"))).toBe(false);
  });

  it("exits 2 without a token or with a bad URL", async () => {
    expect((await host("enrol", cp.url)).code).toBe(2);
    // plain http without --insecure is refused before anything is sent, saying why
    const plain = await host("enrol", cp.url, "--token", "good");
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/plain http sends the token .* --insecure/);
    expect((await host("enrol", "ftp://x", "--token", "good")).code).toBe(2);
  });

  it("enrols, keeps the key private, refuses to enrol twice, and the daemon links and applies", async () => {
    const r = await host("enrol", cp.url, "--token", "good", "--insecure");
    // the only thing on stderr is the warning that --insecure asked for
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^mesh-host: WARNING: enrolling with --insecure: /)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`enrolled as node ${cp.nodeId}`));
    expect(statSync(join(state, "node.key")).mode & 0o777).toBe(0o600);
    expect(cp.enrolments[0]!.profile.hostVersion).toBe(JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")).version);
    expect(cp.enrolments[0]!.profile.machineId).toMatch(/^[0-9a-f]{32}$/);
    const twice = await host("enrol", cp.url, "--token", "good", "--insecure");
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/already enrolled.*--force/);

    let stderr = "";
    daemon = spawn(process.execPath, [BIN, "run", "--state-dir", state, "--root", root, "--interval", "60"], {
      env: { ...process.env, MESH_LOG_LEVEL: "info" },
    });
    daemon.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    await waitFor("the report of v1", () => cp.reports.find((rep) => rep.declarationVersion === 1 && rep.owned.length === 1), 10_000);
    expect(readFileSync(join(root, "motd"), "utf8")).toBe("hi\n");
    let status: Record<string, unknown> = {};
    for (let i = 0; i < 50 && !(status.connected === true && status.appliedVersion === 1); i++) {
      status = JSON.parse((await host("status", "--json")).stdout);
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(status).toMatchObject({ state: "enrolled", nodeId: cp.nodeId, controlPlaneUrl: cp.url, declarationVersion: 1, owned: 1, lastReconcileResult: "ok" });
    // Logs are JSON lines that carry the node id and never the token or key.
    const lines = stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.nodeId === cp.nodeId && l.msg === "link up")).toBe(true);
    expect(stderr).not.toMatch(/PRIVATE KEY|good/);
    const exited = new Promise<number | null>((resolve) => daemon!.once("exit", (code) => resolve(code)));
    daemon.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("takes the token from a file or standard input, so it need not be on the command line", async () => {
    const file = join(base, "token");
    writeFileSync(file, "good\n", { mode: 0o600 });
    const fromFile = await host("enrol", cp.url, "--token-file", file, "--insecure");
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(cp.enrolments[0]!.token).toBe("good");
    const fromStdin = await hostWithInput("good\nnot read\n", "enrol", cp.url, "--token", "-", "--insecure", "--force");
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(cp.enrolments[1]!.token).toBe("good");
    // wrong uses exit 2 before anything is sent
    const both = await host("enrol", cp.url, "--token", "good", "--token-file", file, "--insecure", "--force");
    expect([both.code, both.stderr]).toEqual([2, expect.stringMatching(/either --token or --token-file/)]);
    const empty = await hostWithInput("", "enrol", cp.url, "--token", "-", "--insecure", "--force");
    expect([empty.code, empty.stderr]).toEqual([2, expect.stringMatching(/standard input is empty/)]);
    writeFileSync(file, "x".repeat(10_000));
    const big = await host("enrol", cp.url, "--token-file", file, "--insecure", "--force");
    expect([big.code, big.stderr]).toEqual([2, expect.stringMatching(/larger than 4096 bytes/)]);
    const missing = await host("enrol", cp.url, "--token-file", join(base, "nope"), "--insecure", "--force");
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/cannot read it \(ENOENT\)/)]);
    expect(cp.enrolments).toHaveLength(2);
  });

  it("re-enrolling with --force proves the old key: a fresh signature over the node, the new key and the token", async () => {
    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    expect(cp.enrolments[0]!.replaces).toBeUndefined();
    const oldKey = cp.enrolments[0]!.publicKey;
    expect((await host("enrol", cp.url, "--token", "good", "--insecure", "--force")).code).toBe(0);
    const again = cp.enrolments[1]!;
    expect(again.publicKey).not.toBe(oldKey);
    expect(again.replaces).toMatchObject({ nodeId: cp.nodeId });
    const message = replacementProofMessage(cp.nodeId, again.publicKey, "good", again.replaces!.time);
    const key = createPublicKey({ key: Buffer.from(oldKey, "base64"), format: "der", type: "spki" });
    expect(verify(null, Buffer.from(message), key, Buffer.from(again.replaces!.signature, "base64"))).toBe(true);
  });

  it("a daemon that is not enrolled says so and keeps running until enrolled", async () => {
    let stderr = "";
    daemon = spawn(process.execPath, [BIN, "run", "--state-dir", state, "--root", root, "--interval", "0.2"], {
      env: { ...process.env, MESH_LOG_LEVEL: "info" },
    });
    daemon.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    await waitFor("the hosted log line", () => /not enrolled \(hosted\)/.test(stderr));
    expect(daemon.exitCode).toBeNull();
    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    await waitFor("the daemon's first report", () => cp.reports.length > 0, 10_000);
    const exited = new Promise<number | null>((resolve) => daemon!.once("exit", (code) => resolve(code)));
    daemon.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("a daemon whose binary is replaced on disk (a package upgrade) reports and exits 0, enrolled or hosted", async () => {
    // Its own copy of the bundle, so the test can put another file at its path as dpkg would (write beside, rename).
    const bin = join(base, "bin", "mesh-host.js");
    mkdirSync(join(base, "bin"));
    writeFileSync(bin, readFileSync(BIN));
    const replace = () => {
      writeFileSync(`${bin}.dpkg-new`, readFileSync(BIN));
      renameSync(`${bin}.dpkg-new`, bin);
    };
    const run = () => {
      const child = spawn(process.execPath, [bin, "run", "--state-dir", state, "--root", root, "--interval", "0.2"], {
        env: { ...process.env, MESH_LOG_LEVEL: "info" },
      });
      const out = { stderr: "", exited: new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code))) };
      child.stderr!.on("data", (c: Buffer) => (out.stderr += c.toString()));
      return { child, out };
    };

    const hosted = run();
    daemon = hosted.child;
    await waitFor("the hosted log line", () => /not enrolled \(hosted\)/.test(hosted.out.stderr));
    replace();
    expect(await hosted.out.exited).toBe(0);
    expect(hosted.out.stderr).toMatch(/host binary replaced on disk; exiting for the supervisor to start it/);

    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    const enrolled = run();
    daemon = enrolled.child;
    await waitFor("the report of v1", () => cp.reports.find((rep) => rep.declarationVersion === 1), 10_000);
    const reports = cp.reports.length;
    replace();
    expect(await enrolled.out.exited).toBe(0);
    // The same version put there: nothing on trial, and the report after the apply was sent before it left.
    expect(enrolled.out.stderr).toMatch(/the host binary was replaced by the same version; exiting for the supervisor to start it/);
    expect(cp.reports.length).toBeGreaterThan(reports);
    expect(existsSync(join(state, "upgrade.json"))).toBe(false);
  });

  it("a daemon whose node.key is damaged is never hosted: it keeps reconciling, says what is damaged and how to recover", async () => {
    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    const run = () => {
      const child = spawn(process.execPath, [BIN, "run", "--state-dir", state, "--root", root, "--interval", "0.2"], {
        env: { ...process.env, MESH_LOG_LEVEL: "info" },
      });
      let stderr = "";
      child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
      return { child, log: () => stderr };
    };
    let d = run();
    daemon = d.child;
    await waitFor("the report of v1", () => cp.reports.find((rep) => rep.declarationVersion === 1 && rep.owned.length === 1), 10_000);
    let exited = new Promise<number | null>((resolve) => d.child.once("exit", (code) => resolve(code)));
    d.child.kill("SIGTERM");
    expect(await exited).toBe(0);

    writeFileSync(join(state, "node.key"), "-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n");
    d = run();
    daemon = d.child;
    await waitFor("the damaged log line", () => /identity damaged/.test(d.log()), 10_000);
    // It still reconciles: drift on what it owns is corrected.
    writeFileSync(join(root, "motd"), "changed by hand\n");
    await waitFor("the drift corrected", () => readFileSync(join(root, "motd"), "utf8") === "hi\n", 10_000);
    const status = JSON.parse((await host("status", "--json")).stdout);
    expect(status).toMatchObject({
      state: "damaged",
      nodeId: cp.nodeId,
      owned: 1,
      identityProblem: "node.key is not a private key",
      recovery: expect.stringMatching(/mesh-host enrol .* --token T.*store is kept/),
    });
    const text = (await host("status")).stdout;
    expect(text).toMatch(/^state: enrolled, but its identity is DAMAGED: node.key is not a private key$/m);
    expect(text).toMatch(/to recover: re-enrol/);

    // The operator re-enrols (no --force needed): the store is kept and the daemon links again by itself.
    const before = cp.reports.length;
    expect((await host("enrol", cp.url, "--token", "good", "--insecure")).code).toBe(0);
    await waitFor(
      "a report over the new key, owning what it owned",
      () => cp.reports.slice(before).find((rep) => rep.owned.length === 1 && !rep.storeLost),
      10_000,
    );
    exited = new Promise<number | null>((resolve) => d.child.once("exit", (code) => resolve(code)));
    d.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
