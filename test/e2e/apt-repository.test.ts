// The control plane's signed apt repository, as apt sees it: InRelease verifies with gpgv against
// /apt/mesh.gpg; apt-get update in a sandbox succeeds and apt-cache policy shows mesh-host's versions;
// a tampered Packages file is refused; a .deb copied into the pool appears; the key survives a
// restart; paths outside the repository are 404; without the tools /apt is 503 and the page says why.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aptSandbox, makeDeb, startAptRepository, type AptRepositoryServer } from "../harness/apt-repository";
import { ADMIN_PASSWORD, ControlPlane } from "../harness/control-plane";
import { sessionCookieFor } from "../harness/session";
import { waitFor } from "../harness/wait";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-apt-e2e-"));
const arch = spawnSync("dpkg", ["--print-architecture"], { encoding: "utf8" }).stdout.trim();

/** A GET with the path sent exactly as written (fetch would normalise `..` away). */
function rawGet(base: string, rawPath: string): Promise<number> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: rawPath, method: "GET" }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("apt repository", () => {
  let repo: AptRepositoryServer;
  const dataDir = path.join(tmp, "data");

  beforeAll(async () => {
    fs.mkdirSync(dataDir);
    const debs = [makeDeb(path.join(tmp, "debs"), "mesh-host", "1.0.0", arch), makeDeb(path.join(tmp, "debs"), "mesh-host", "1.0.1", arch)];
    repo = await startAptRepository({ debs, dataDir });
  }, 120_000);
  afterAll(async () => {
    await repo?.cp.stop();
    spawnSync("gpgconf", ["--kill", "gpg-agent"], { env: { ...process.env, GNUPGHOME: path.join(dataDir, "apt/gnupg") } });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("InRelease verifies with gpgv against the downloaded /apt/mesh.gpg", async () => {
    const inRelease = path.join(tmp, "InRelease");
    fs.writeFileSync(inRelease, Buffer.from(await (await fetch(`${repo.url}/dists/stable/InRelease`)).arrayBuffer()));
    const r = spawnSync("gpgv", ["--keyring", repo.keyPath, inRelease], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    // and a changed byte does not
    fs.writeFileSync(inRelease, fs.readFileSync(inRelease, "utf8").replace("Suite: stable", "Suite: stablf"));
    expect(spawnSync("gpgv", ["--keyring", repo.keyPath, inRelease]).status).not.toBe(0);
  });

  it("apt-get update in a sandbox succeeds and apt-cache policy shows mesh-host's versions from it", async () => {
    const apt = aptSandbox(path.join(tmp, "sandbox"), repo.sourceLine);
    const update = await apt.run("apt-get", ["update"]);
    expect(update.code, update.stdout + update.stderr).toBe(0);
    expect(update.stderr).not.toMatch(/^(W|E):/m);
    // only the sandbox's sources: nothing of this machine's /etc/apt was read
    expect(
      update.stdout
        .split("\n")
        .filter((l) => /^(Get|Hit|Ign|Err):/.test(l))
        .every((l) => l.includes(repo.url)),
    ).toBe(true);
    const policy = await apt.run("apt-cache", ["policy", "mesh-host"]);
    expect(policy.code, policy.stderr).toBe(0);
    expect(policy.stdout).toMatch(/Candidate: 1\.0\.1/);
    expect(policy.stdout).toContain("1.0.0");
    expect(policy.stdout).toContain(`${repo.url} stable/main ${arch} Packages`);
    // and it downloads the package itself, checked against the index
    const download = await apt.run("apt-get", ["install", "--download-only", "-y", "-o", "Debug::NoLocking=1", "mesh-host=1.0.0"]);
    expect(download.code, download.stdout + download.stderr).toBe(0);
    expect(fs.existsSync(path.join(apt.dir, "var/cache/apt/archives", `mesh-host_1.0.0_${arch}.deb`))).toBe(true);
  }, 120_000);

  it("apt refuses a Packages file that does not match the signed Release (hash mismatch)", async () => {
    // A proxy between apt and the control plane that changes one byte of the Packages it passes on.
    const proxy = http.createServer(async (req, res) => {
      const upstream = await fetch(`${repo.cp.url}${req.url}`);
      let body = Buffer.from(await upstream.arrayBuffer());
      if (req.url!.endsWith("/Packages")) body = Buffer.from(body.toString("utf8").replace("Version: 1.0.1", "Version: 9.9.9"));
      if (req.url!.endsWith("/Packages.gz") || req.url!.endsWith("/Packages.xz")) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(upstream.status, { "content-length": String(body.length) }).end(body);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const port = (proxy.address() as { port: number }).port;
      const apt = aptSandbox(path.join(tmp, "tampered"), `deb [signed-by=${repo.keyPath}] http://127.0.0.1:${port}/apt stable main`);
      const update = await apt.run("apt-get", ["update"]);
      expect(update.stdout + update.stderr).toMatch(/Hash Sum mismatch|File has unexpected size/);
      const policy = await apt.run("apt-cache", ["policy", "mesh-host"]);
      expect(policy.stdout).not.toContain("9.9.9");
      expect(policy.stdout).not.toMatch(/Candidate: \d/);
    } finally {
      proxy.close();
    }
  }, 120_000);

  it("a .deb copied into the data directory's apt/pool is indexed within seconds", async () => {
    makeDeb(repo.poolDir, "mesh-host", "1.0.2", arch);
    await waitFor(
      "1.0.2 in the index",
      async () => (await (await fetch(`${repo.url}/dists/stable/main/binary-${arch}/Packages`)).text()).includes("Version: 1.0.2"),
      30_000,
      250,
    );
    const apt = aptSandbox(path.join(tmp, "later"), repo.sourceLine);
    expect((await apt.run("apt-get", ["update"])).code).toBe(0);
    expect((await apt.run("apt-cache", ["policy", "mesh-host"])).stdout).toMatch(/Candidate: 1\.0\.2/);
  }, 60_000);

  it("answers 404 for paths outside the repository, however they are spelled", async () => {
    fs.writeFileSync(path.join(dataDir, "apt/secret.txt"), "not served");
    const paths = [
      "/apt/../../etc/passwd",
      "/apt/gnupg/pubring.kbx",
      "/apt/%2e%2e/gnupg/pubring.kbx",
      "/apt/pool/main/..%2f..%2fgnupg%2fpubring.kbx",
      "/apt/pool/main/%2e%2e%2f%2e%2e%2fsecret.txt",
      "/apt/dists/stable/../../secret.txt",
      "/apt/builds",
      "/apt/pool/main/mesh-host_9_amd64.deb",
    ];
    for (const p of paths) {
      const status = await rawGet(repo.cp.url, p);
      expect([404, 400], p).toContain(status);
    }
    expect(await rawGet(repo.cp.url, "/apt/mesh.gpg")).toBe(200);
  });

  it("the Add machines page offers the apt path: key, sources line, install", async () => {
    const cookie = await sessionCookieFor(repo.cp.url, "admin", ADMIN_PASSWORD);
    const html = await (await fetch(`${repo.cp.url}/machines`, { headers: { cookie } })).text();
    expect(html).toContain("Install with apt");
    expect(html).toContain(`curl -fsSL -o /usr/share/keyrings/mesh.gpg ${repo.url}/mesh.gpg`);
    expect(html).toContain(`deb [signed-by=/usr/share/keyrings/mesh.gpg] ${repo.url} stable main`);
    expect(html).toContain("apt-get update &amp;&amp; apt-get install -y mesh-host");
    expect(html).toContain(`mesh-host_1.0.0_${arch}.deb`);
  });

  it("keeps its signing key across a restart", async () => {
    const before = fs.readFileSync(repo.keyPath);
    await repo.cp.stop();
    await repo.cp.boot();
    const after = Buffer.from(await (await fetch(`${repo.cp.url}/apt/mesh.gpg`)).arrayBuffer());
    expect(after.equals(before)).toBe(true);
    const inRelease = path.join(tmp, "InRelease-restarted");
    fs.writeFileSync(inRelease, Buffer.from(await (await fetch(`${repo.cp.url}/apt/dists/stable/InRelease`)).arrayBuffer()));
    expect(spawnSync("gpgv", ["--keyring", repo.keyPath, inRelease]).status).toBe(0);
  }, 120_000);
});

/** The text of the page's command block named `label`, as a shell would get it from the copy button. */
function commandOnPage(html: string, label: string): string {
  const m = new RegExp(`aria-label="${label}"[^>]*>([^<]*)</code>`).exec(html);
  if (!m) throw new Error(`no "${label}" on the page`);
  return m[1]!
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

describe("apt repository over TLS with a self-signed certificate (the pinned path the page describes)", () => {
  let repo: AptRepositoryServer;
  beforeAll(async () => {
    // The test's own fetches accept the self-signed certificate; apt and curl below do not.
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    repo = await startAptRepository({ debs: [makeDeb(path.join(tmp, "tls-debs"), "mesh-host", "2.0.0", arch)], env: { MESH_TLS: "self-signed" } });
  }, 120_000);
  afterAll(async () => {
    await repo?.dispose();
    delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  });

  it("the page's pinned key download and transport line let apt-get update over https; without the line apt refuses the certificate", async () => {
    expect(repo.url).toMatch(/^https:/);
    const cookie = await sessionCookieFor(repo.cp.url, "admin", ADMIN_PASSWORD);
    const html = await (await fetch(`${repo.cp.url}/machines`, { headers: { cookie } })).text();
    const dir = path.join(tmp, "tls-sandbox");
    const keyring = path.join(tmp, "tls-mesh.gpg");
    const apt = aptSandbox(dir, `deb [signed-by=${keyring}] ${repo.url} stable main`);
    // Step 1 as the page gives it (curl pinned to the control plane's key), into the sandbox's keyring path.
    const key = spawnSync("sh", ["-c", commandOnPage(html, "Trust the repository&#x27;s key command").replace("/usr/share/keyrings/mesh.gpg", keyring)], {
      encoding: "utf8",
    });
    expect(key.status, key.stderr).toBe(0);
    expect(fs.readFileSync(keyring).equals(fs.readFileSync(repo.keyPath))).toBe(true);
    // Without step 3, apt will not talk to a certificate it cannot check.
    const refused = await apt.run("apt-get", ["update"]);
    expect(refused.stdout + refused.stderr).toMatch(/certificate|Certificate/);
    expect((await apt.run("apt-cache", ["policy", "mesh-host"])).stdout).not.toMatch(/Candidate: 2\.0\.0/);
    // Step 3 as the page gives it, into the sandbox's apt.conf.d.
    const transport = commandOnPage(html, "Let apt reach this control plane command").replace("/etc/apt/apt.conf.d", apt.confDir);
    expect(spawnSync("sh", ["-c", transport]).status).toBe(0);
    const update = await apt.run("apt-get", ["update"]);
    expect(update.code, update.stdout + update.stderr).toBe(0);
    expect((await apt.run("apt-cache", ["policy", "mesh-host"])).stdout).toMatch(/Candidate: 2\.0\.0/);
  }, 120_000);
});

describe("apt repository without its tools", () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    // PATH with node's tools but none of gpg, dpkg-scanpackages, apt-ftparchive.
    const bin = path.join(tmp, "no-apt-tools-bin");
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ["openssl", "prlimit"]) {
      const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    cp = await ControlPlane.start({ engine: "pglite", env: { PATH: bin } });
  }, 120_000);
  afterAll(async () => {
    await cp?.dispose();
  });

  it("starts, answers /apt with 503 naming the Debian packages to install, and the Add machines page says so", async () => {
    const res = await fetch(`${cp.url}/apt/dists/stable/InRelease`);
    expect(res.status, cp.output).toBe(503);
    const body = (await res.json()) as { message: string };
    expect(body.message).toContain("apt-get install gnupg dpkg-dev apt-utils");
    expect(cp.output).toContain("apt-get install gnupg dpkg-dev apt-utils");
    const cookie = await sessionCookieFor(cp.url, "admin", ADMIN_PASSWORD);
    const html = await (await fetch(`${cp.url}/machines`, { headers: { cookie } })).text();
    expect(html).toContain("The apt repository is not available on this control plane.");
    expect(html).toContain("apt-get install gnupg dpkg-dev apt-utils");
  });
});
