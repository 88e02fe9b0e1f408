// The apt repository built with the real tools (dpkg-deb, dpkg-scanpackages, apt-ftparchive, gpg):
// InRelease verifies with gpgv against the published key, the index follows the .debs, only
// indexed paths exist, the key survives a restart, missing tools are named.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { handleApt } from "../http/apt-handler";
import { createAptRepository, type AptRepository } from "./apt-repository";
import { stopGpgAgent } from "./apt-signing-key";
import { makeDeb } from "../testing/test-deb";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-apt-"));
const quiet = { info() {}, warn() {}, error() {} };

/** The file answering rel, or null when there is none (unavailable throws). */
async function fileOf(repo: AptRepository, rel: string): Promise<string | null> {
  const r = await repo.lookup(rel);
  if (r.kind === "unavailable") throw new Error(r.message);
  if (r.kind !== "file") return null;
  await r.file.handle.close();
  return r.file.file;
}
const text = async (repo: AptRepository, rel: string) => {
  const f = await fileOf(repo, rel);
  return f ? fs.readFileSync(f) : null;
};

const dataDirs: string[] = [];
const repos: AptRepository[] = [];
function repository(name: string, extra: Partial<Parameters<typeof createAptRepository>[0]> = {}) {
  const dataDir = path.join(tmp, name, "data");
  dataDirs.push(dataDir);
  const repo = createAptRepository({ dataDir, artifactsDir: path.join(tmp, name, "artifacts"), log: quiet, checkIntervalMs: 0, ...extra });
  repos.push(repo);
  return repo;
}

afterAll(async () => {
  for (const r of repos) await r.close(0);
  for (const d of dataDirs) await stopGpgAgent(path.join(d, "apt/gnupg"));
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("apt repository", () => {
  it("indexes the artifacts' and the pool's .debs, signed so gpgv verifies InRelease and Release.gpg with /apt/mesh.gpg", async () => {
    makeDeb(path.join(tmp, "a/artifacts"), "mesh-host", "1.0.0", "amd64");
    const repo = repository("a");
    makeDeb(repo.poolDir, "mesh-host", "1.0.1", "amd64");
    makeDeb(repo.poolDir, "extra-tool", "2.0", "all");
    const keyring = path.join(tmp, "a/mesh.gpg");
    fs.writeFileSync(keyring, (await text(repo, "mesh.gpg"))!);
    const dists = (await fileOf(repo, "dists/stable/InRelease"))!.replace(/InRelease$/, "");
    const inRelease = spawnSync("gpgv", ["--keyring", keyring, path.join(dists, "InRelease")], { encoding: "utf8" });
    expect(inRelease.status, inRelease.stderr).toBe(0);
    const detached = spawnSync("gpgv", ["--keyring", keyring, path.join(dists, "Release.gpg"), path.join(dists, "Release")], { encoding: "utf8" });
    expect(detached.status, detached.stderr).toBe(0);

    const release = (await text(repo, "dists/stable/Release"))!.toString();
    expect(release).toMatch(/^Suite: stable$/m);
    expect(release).toMatch(/^Components: main$/m);
    expect(release).toMatch(/^Architectures: amd64 arm64$/m);
    expect(release).toMatch(/^Valid-Until: /m);
    expect(release).toContain("main/binary-amd64/Packages.gz");
    const amd64 = (await text(repo, "dists/stable/main/binary-amd64/Packages"))!.toString();
    expect(amd64.match(/^Package: mesh-host$/gm)).toHaveLength(2);
    expect(amd64).toMatch(/^Version: 1\.0\.0$/m);
    expect(amd64).toMatch(/^Version: 1\.0\.1$/m);
    expect(amd64).toContain("Filename: pool/main/extra-tool_2.0_all.deb");
    expect(zlib.gunzipSync((await text(repo, "dists/stable/main/binary-amd64/Packages.gz"))!).toString()).toBe(amd64);
    // "all" packages are in every architecture; arm64 has no mesh-host yet
    const arm64 = (await text(repo, "dists/stable/main/binary-arm64/Packages"))!.toString();
    expect(arm64).toContain("Package: extra-tool");
    expect(arm64).not.toContain("mesh-host");
    expect((await text(repo, "pool/main/mesh-host_1.0.1_amd64.deb"))!.equals(fs.readFileSync(path.join(repo.poolDir, "mesh-host_1.0.1_amd64.deb")))).toBe(true);
    expect(fs.statSync(path.join(tmp, "a/data/apt/gnupg")).mode & 0o777).toBe(0o700);
  }, 60_000);

  it("answers only paths its index names: traversal, absolute and unknown paths are not found", async () => {
    const repo = repository("b");
    fs.mkdirSync(path.join(tmp, "b/artifacts"), { recursive: true });
    fs.writeFileSync(path.join(tmp, "b/artifacts/secret.txt"), "no");
    const fileOfRelease = (await fileOf(repo, "dists/stable/Release"))!.replace(/\/dists\/stable\/Release$/, "/x");
    // Each of these names a real file when joined onto the build directory (data/apt/builds/<instance>/<build>).
    const escapes = [
      "../../../gnupg/pubring.kbx",
      "dists/stable/../../../../../gnupg/pubring.kbx",
      "pool/main/../../../../../../../artifacts/secret.txt",
      "../../../../../artifacts/secret.txt",
    ];
    for (const rel of escapes) expect(fs.existsSync(path.join(path.dirname(fileOfRelease), rel)), rel).toBe(true);
    for (const rel of [
      ...escapes,
      "/etc/passwd",
      "gnupg/pubring.kbx",
      "pool/main/secret.txt",
      "dists/stable/main/binary-amd64/Packages.xz",
      "",
      "dists",
      "pool/main",
    ]) {
      expect(await repo.lookup(rel), rel).toEqual({ kind: "none" });
    }
  }, 60_000);

  it("rebuilds when the set of .debs changes (by stat), and only then", async () => {
    let now = Date.now();
    const repo = repository("c", { now: () => now });
    const first = (await fileOf(repo, "dists/stable/InRelease"))!;
    expect((await fileOf(repo, "dists/stable/InRelease"))!).toBe(first);
    makeDeb(repo.poolDir, "mesh-host", "3.0", "arm64");
    now += 1000;
    const second = (await fileOf(repo, "dists/stable/InRelease"))!;
    expect(second).not.toBe(first);
    expect((await text(repo, "dists/stable/main/binary-arm64/Packages"))!.toString()).toMatch(/^Version: 3\.0$/m);
    // a re-signing is due once half the validity has passed
    now += 4 * 24 * 3600_000;
    expect((await fileOf(repo, "dists/stable/InRelease"))!).not.toBe(second);
  }, 60_000);

  it("concurrent requests during a rebuild share one build and each sees a whole index", async () => {
    const repo = repository("d");
    const results = await Promise.all(Array.from({ length: 8 }, () => fileOf(repo, "dists/stable/Release")));
    expect(new Set(results).size).toBe(1);
    const instances = fs.readdirSync(path.join(tmp, "d/data/apt/builds"));
    expect(instances).toHaveLength(1);
    expect(fs.readdirSync(path.join(tmp, "d/data/apt/builds", instances[0]!)).filter((n) => !n.startsWith("."))).toHaveLength(1);
  }, 60_000);

  it("two instances sharing one data directory each keep serving an InRelease gpgv verifies after both rebuild", async () => {
    let now = Date.now();
    const one = repository("two", { now: () => now });
    const other = repository("two", { now: () => now });
    const keyring = path.join(tmp, "two/mesh.gpg");
    fs.writeFileSync(keyring, (await text(one, "mesh.gpg"))!);
    await fileOf(other, "dists/stable/InRelease");
    for (const repo of [one, other, one, other]) {
      makeDeb(repo.poolDir, "mesh-host", `4.0.${now}`, "amd64");
      now += 1000;
      await fileOf(repo, "dists/stable/InRelease");
    }
    for (const repo of [one, other]) {
      // no rebuild on this lookup (the other's .debs were added before its last build)
      const inRelease = (await fileOf(repo, "dists/stable/InRelease"))!;
      const v = spawnSync("gpgv", ["--keyring", keyring, inRelease], { encoding: "utf8" });
      expect(v.status, v.stderr).toBe(0);
    }
  }, 120_000);

  it("a build that keeps failing once stale is retried with exponential backoff, not every check", async () => {
    let now = Date.now();
    const errors: unknown[] = [];
    const repo = repository("backoff", { now: () => now, log: { ...quiet, error: (o: unknown) => errors.push(o) } });
    await fileOf(repo, "dists/stable/InRelease");
    // make every later build fail: the builds directory cannot be created
    const builds = path.join(tmp, "backoff/data/apt/builds");
    fs.rmSync(builds, { recursive: true, force: true });
    fs.writeFileSync(builds, "not a directory");
    now += 4 * 24 * 3600_000; // stale
    for (let i = 0; i < 60; i++) {
      const r = await repo.lookup("dists/stable/InRelease");
      if (r.kind === "file") await r.file.handle.close();
      now += 2_000;
    }
    // 2 minutes of requests every 2 s: tries at 0, 2, 6, 14, 30, 62 s, ... — not 60
    expect(errors.length).toBeGreaterThan(1);
    expect(errors.length).toBeLessThanOrEqual(7);
  }, 60_000);

  it("a download under way is served whole though two rebuilds removed its file meanwhile", async () => {
    const artifacts = path.join(tmp, "rebuilt/artifacts");
    makeDeb(artifacts, "mesh-host", "1.0.0", "amd64");
    const repo = repository("rebuilt");
    const rel = "dists/stable/main/binary-amd64/Packages";
    const before = (await text(repo, rel))!;
    // Between the request's lookup and its reading the body: two .debs added, each a rebuild, and the
    // build the lookup answered from removed (only the current and the one before it are kept).
    let looked = "";
    const racing: AptRepository = {
      ...repo,
      async lookup(r) {
        const found = await repo.lookup(r);
        if (found.kind === "file") looked = found.file.file;
        for (const v of ["1.0.1", "1.0.2"]) {
          makeDeb(artifacts, "mesh-host", v, "amd64");
          await fileOf(repo, "dists/stable/InRelease");
        }
        return found;
      },
    };
    const res = await handleApt({ log: quiet as never }, racing, rel);
    expect(fs.existsSync(looked)).toBe(false);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(before)).toBe(true);
    expect((await text(repo, rel))!.toString().match(/^Package: mesh-host$/gm)).toHaveLength(3);
  }, 60_000);

  it("keeps its key across restarts (a new repository object on the same data directory)", async () => {
    const before = await text(repository("e"), "mesh.gpg");
    const after = await text(repository("e"), "mesh.gpg");
    expect(before!.length).toBeGreaterThan(0);
    expect(after!.equals(before!)).toBe(true);
  }, 60_000);

  it("signs with the operator's key given as an armored secret key file", async () => {
    const home = path.join(tmp, "operator-gnupg");
    fs.mkdirSync(home, { mode: 0o700 });
    const env = { ...process.env, GNUPGHOME: home };
    execFileSync(
      "gpg",
      ["--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", "Operator <op@example.invalid>", "ed25519", "sign", "never"],
      { env, stdio: "ignore" },
    );
    const keyFile = path.join(tmp, "operator.asc");
    fs.writeFileSync(keyFile, execFileSync("gpg", ["--batch", "--armor", "--export-secret-keys"], { env }));
    const operatorPublic = execFileSync("gpg", ["--batch", "--export"], { env });
    await stopGpgAgent(home);
    const repo = repository("f", { signingKeyFile: keyFile });
    expect((await text(repo, "mesh.gpg"))!.equals(operatorPublic)).toBe(true);
    const keyring = path.join(tmp, "operator.gpg");
    fs.writeFileSync(keyring, operatorPublic);
    const verify = spawnSync("gpgv", ["--keyring", keyring, (await fileOf(repo, "dists/stable/InRelease"))!], { encoding: "utf8" });
    expect(verify.status, verify.stderr).toBe(0);
  }, 60_000);

  it("a key file without a secret key is refused with a message naming the setting", async () => {
    const keyFile = path.join(tmp, "not-a-key.asc");
    fs.writeFileSync(keyFile, "hello\n");
    const repo = repository("g", { signingKeyFile: keyFile });
    expect(await repo.lookup("dists/stable/Release")).toMatchObject({ kind: "unavailable", message: expect.stringMatching(/MESH_APT_SIGNING_KEY_FILE/) });
    expect(repo.status().error).toMatch(/MESH_APT_SIGNING_KEY_FILE/);
  }, 60_000);

  it("closing during a build waits for it and leaves no gpg-agent behind", async () => {
    const repo = repository("i");
    const lookup = repo.lookup("dists/stable/InRelease");
    await repo.close();
    const looked = await lookup;
    expect(looked.kind).toBe("file");
    if (looked.kind === "file") await looked.file.handle.close();
    const home = path.join(tmp, "i/data/apt/gnupg");
    const agents = spawnSync("pgrep", ["-f", `gpg-agent --homedir ${home}`], { encoding: "utf8" }).stdout.trim();
    expect(agents).toBe("");
  }, 60_000);

  it("without the tools it is unavailable and says which Debian packages to install", async () => {
    const repo = repository("h", { pathEnv: path.join(tmp, "empty-bin") });
    const r = await repo.lookup("dists/stable/Release");
    expect(r.kind).toBe("unavailable");
    expect(r.kind === "unavailable" && r.message).toContain("apt-get install gnupg dpkg-dev apt-utils");
    expect(repo.status().missing.debianPackages).toEqual(["gnupg", "dpkg-dev", "apt-utils"]);
    expect(fs.existsSync(path.join(tmp, "h/data/apt/gnupg"))).toBe(false);
  });
});
