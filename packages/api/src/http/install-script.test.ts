// install.sh as an operator runs it (`curl -fsSL …/install.sh | sh`), against a local server: a
// tarball that cannot be downloaded, or does not match its sha256, fails loudly with a message that
// says what to do; a control plane with no tarball at all serves a script that fails, never an empty 0.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleDownload, installScript } from "./downloads-handler";

let dir: string;
let server: Server;
let url: string;
let tarball: Buffer | null = null;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mesh-install-"));
  for (const arch of ["x86_64", "aarch64"]) writeFileSync(join(dir, `mesh-host-1.2.3-linux-${arch}.tar.gz`), "the real tarball");
  server = createServer((_req, res) => {
    if (tarball) res.writeHead(200).end(tarball);
    else res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not_found","message":"no artifact"}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** The script run as `… | sh` would run it (asynchronously: the server lives in this process). */
async function runScript(script: string): Promise<{ status: number | null; stderr: string }> {
  const { spawn } = await import("node:child_process");
  return new Promise((resolve) => {
    const child = spawn("sh", ["-s"], { env: { ...process.env, MESH_WGET_OPTS: "" } });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("close", (status) => resolve({ status, stderr }));
    child.stdin.end(script);
  });
}

describe("install.sh", () => {
  it("fails loudly when the tarball cannot be downloaded", async () => {
    tarball = null;
    const r = await runScript(installScript({ artifactsDir: dir, hostVersion: "1.2.3", publicUrl: url }));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /mesh-host: could not download http:\/\/127\.0\.0\.1:\d+\/download\/mesh-host-1\.2\.3-linux-\w+\.tar\.gz \(curl exit 22\): .*run 'npm run package' there/,
    );
  });

  it("fails loudly when the download does not match its sha256", async () => {
    tarball = Buffer.from("something else");
    const r = await runScript(installScript({ artifactsDir: dir, hostVersion: "1.2.3", publicUrl: url }));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/does not match its sha256/);
  });

  it("an artifact replaced while its download is under way (`npm run package` again) is served whole as it was", async () => {
    const artifacts = mkdtempSync(join(tmpdir(), "mesh-download-"));
    try {
      const name = "mesh-host-1.2.3-linux-x86_64";
      writeFileSync(join(artifacts, name), "old build\n");
      const res = await handleDownload({ log: console as never }, name, { artifactsDir: artifacts, hostVersion: "1.2.3", publicUrl: url });
      writeFileSync(join(artifacts, `${name}.new`), "a new and longer build\n");
      renameSync(join(artifacts, `${name}.new`), join(artifacts, name));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe("10");
      expect(await res.text()).toBe("old build\n");
      const missing = await handleDownload({ log: console as never }, "mesh-host-9.9.9-linux-x86_64", {
        artifactsDir: artifacts,
        hostVersion: "1.2.3",
        publicUrl: url,
      });
      expect(missing.status).toBe(404);
    } finally {
      rmSync(artifacts, { recursive: true, force: true });
    }
  });

  it("a control plane with no tarball serves a script that says so and exits 1", async () => {
    const empty = mkdtempSync(join(tmpdir(), "mesh-install-none-"));
    try {
      const res = await handleDownload({ log: console as never }, "install.sh", { artifactsDir: empty, hostVersion: "1.2.3", publicUrl: url });
      expect(res.headers.get("x-mesh-artifacts")).toBe("missing");
      const r = await runScript(await res.text());
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(
        "mesh-host: this control plane has no mesh-host 1.2.3 tarball to install: run `npm run package` on the control plane, then run this command again",
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
