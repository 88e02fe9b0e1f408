// /apt and /download serve files from an open descriptor: HEAD answers the headers and closes it,
// a download read through or given up half way (the client went away) closes it too — no descriptor
// is left to the garbage collector (counted in /proc/self/fd).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AptRepository } from "../apt/apt-repository";
import { handleApt } from "./apt-handler";
import { handleDownload } from "./downloads-handler";
import { fileBody } from "./file-body";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-file-body-"));
const quiet = { info() {}, warn() {}, error() {} } as never;
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** This process's descriptors open on `file`. */
function fdsOn(file: string): number {
  return fs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

const NAME = "mesh-host-1.2.3-linux-x86_64.tar.gz";
const SIZE = 300 * 1024;
const artifacts = path.join(tmp, "artifacts");
fs.mkdirSync(artifacts);
const artifact = path.join(artifacts, NAME);
fs.writeFileSync(artifact, Buffer.alloc(SIZE, 7));
const download = (method: string, name = NAME) =>
  handleDownload(quiet, name, { artifactsDir: artifacts, hostVersion: "1.2.3", publicUrl: "http://127.0.0.1:1" }, method);

/** An apt repository answering every path with `file`, opened per lookup as the real one does. */
const aptOf = (file: string, kind: "deb" | "index" = "deb") =>
  ({
    async lookup() {
      const handle = await fs.promises.open(file, "r");
      return { kind: "file", file: { file, handle, size: (await handle.stat()).size, kind } };
    },
  }) as unknown as AptRepository;

describe("file bodies", () => {
  it("HEAD /download answers content-length and type without a body, and closes the descriptor", async () => {
    expect(fdsOn(artifact)).toBe(0);
    const res = await download("HEAD");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.body).toBeNull();
    expect(fdsOn(artifact)).toBe(0);
  });

  it("HEAD /apt answers the headers without a body, and closes the descriptor", async () => {
    const res = await handleApt(quiet, aptOf(artifact), "pool/main/m/mesh-host/mesh-host_1.2.3_amd64.deb", "HEAD");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(res.headers.get("content-type")).toBe("application/vnd.debian.binary-package");
    expect(res.body).toBeNull();
    expect(fdsOn(artifact)).toBe(0);
  });

  it("HEAD of install.sh and of a missing artifact: headers, no body", async () => {
    const script = await download("HEAD", "install.sh");
    expect(script.status).toBe(200);
    expect(script.body).toBeNull();
    expect(Number(script.headers.get("content-length"))).toBe((await (await download("GET", "install.sh")).text()).length);
    const missing = await download("HEAD", "mesh-host-9.9.9-linux-x86_64.tar.gz");
    expect(missing.status).toBe(404);
    expect(missing.body).toBeNull();
  });

  it("a download read through is whole and closes the descriptor", async () => {
    const res = await download("GET");
    expect(fdsOn(artifact)).toBe(1);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBe(SIZE);
    expect(body.every((b) => b === 7)).toBe(true);
    expect(fdsOn(artifact)).toBe(0);
  });

  it("a client that goes away mid-download (/download, /apt) closes the descriptor", async () => {
    for (const request of [() => download("GET"), () => handleApt(quiet, aptOf(artifact), "pool/x.deb")]) {
      const res = await request();
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.value!.length).toBeGreaterThan(0);
      expect(first.value!.length).toBeLessThan(SIZE);
      expect(fdsOn(artifact)).toBe(1);
      await reader.cancel();
      expect(fdsOn(artifact)).toBe(0);
    }
  });

  it("a file cut short under the descriptor fails the body rather than ending it short, and closes the descriptor", async () => {
    const file = path.join(tmp, "shrinking");
    fs.writeFileSync(file, Buffer.alloc(200 * 1024, 1));
    const handle = await fs.promises.open(file, "r");
    const reader = fileBody(handle, 200 * 1024).getReader();
    await reader.read();
    fs.truncateSync(file, 1024);
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow(/ended at/);
    expect(fdsOn(file)).toBe(0);
  });
});
