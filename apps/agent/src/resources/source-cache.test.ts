// Sources over a slow link that drops connections: a real `mesh-host apply` against a local
// server that answers late, sends slowly and cuts the first connection of some files halfway.
// Every file lands whole and right, downloads overlap (bounded), and a cut one is resumed (Range).
import { spawn } from "node:child_process";
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { open } from "node:fs/promises";
import { SOURCE_CONCURRENCY, SourceCache } from "./source-cache";
import { sourceOpener } from "./file-source";
import { serveSlowly, type SlowServer } from "./slow-source-server.fixture";

const BIN = join(__dirname, "..", "..", "dist", "mesh-host.js");
const FILES = 24;
const SIZE = 96 * 1024;

let base: string;
let slow: SlowServer;
let server: Server;
let url: string;
const contents = Array.from({ length: FILES }, () => randomBytes(SIZE));

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "mesh-source-cache-"));
  // Every fourth file's first connection is cut halfway.
  slow = serveSlowly(contents, { latencyMs: 100, chunkBytes: 8 * 1024, chunkDelayMs: 5, cut: (i, attempt) => i % 4 === 0 && attempt === 0 });
  server = createServer(slow.handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(base, { recursive: true, force: true });
});

function apply(file: string, root: string, state: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "apply", "--file", file, "--state-dir", state, "--root", root], {
    env: { ...process.env, MESH_LOG_LEVEL: "warn" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("sources over a slow link that drops connections", () => {
  it("lands every file whole, downloads several at once (at most the bound), and resumes a cut download where it stopped", async () => {
    const root = join(base, "root");
    const state = join(base, "state");
    mkdirSync(join(root, "srv"), { recursive: true });
    const decl = join(base, "decl.json");
    const resources = contents.map((c, i) => ({
      type: "file",
      id: `f${i}`,
      path: `/srv/f${i}`,
      mode: "0644",
      source: { url: `${url}/f/${i}`, sha256: createHash("sha256").update(c).digest("hex") },
    }));
    writeFileSync(decl, JSON.stringify({ version: 1, resources }));

    const r = await apply(decl, root, state);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    contents.forEach((c, i) => expect(readFileSync(join(root, "srv", `f${i}`)).equals(c)).toBe(true));
    // Overlapped, and bounded.
    expect(slow.maxInFlight).toBeGreaterThan(1);
    expect(slow.maxInFlight).toBeLessThanOrEqual(SOURCE_CONCURRENCY);
    // Each cut file was asked again from a byte past 0, not from the start.
    for (let i = 0; i < FILES; i += 4) {
      const asked = slow.requests.filter((q) => q.file === i);
      expect(asked.length).toBe(2);
      expect(asked[1]!.from).toBeGreaterThan(0);
    }
    // Files never cut were fetched once, whole.
    expect(slow.requests.filter((q) => q.file % 4 !== 0).every((q) => q.from === 0)).toBe(true);
    expect(slow.requests.filter((q) => q.file % 4 !== 0)).toHaveLength(FILES - FILES / 4);
    // Nothing is left in the state dir's downloads once applied.
    const downloads = join(state, "downloads");
    expect(existsSync(downloads) ? readdirSync(downloads) : []).toEqual([]);
  }, 60_000);

  it("resumes the control plane's own sources too (signed requests with a Range)", async () => {
    const cut = serveSlowly(contents.slice(0, 2), { latencyMs: 10, chunkBytes: 8 * 1024, chunkDelayMs: 1, cut: (_i, attempt) => attempt === 0 });
    const cpServer = createServer(cut.handler);
    await new Promise<void>((r) => cpServer.listen(0, "127.0.0.1", r));
    try {
      const cp = {
        url: `http://127.0.0.1:${(cpServer.address() as AddressInfo).port}`,
        nodeId: "00000000-0000-4000-8000-000000000001",
        privateKey: generateKeyPairSync("ed25519").privateKey,
      };
      const dir = join(base, "cp-downloads");
      const cache = new SourceCache(dir, sourceOpener(cp), 1024 * 1024);
      const sources = [0, 1].map((i) => ({ url: `/f/${i}`, sha256: createHash("sha256").update(contents[i]!).digest("hex") }));
      await cache.prefetch(sources);
      expect(cut.requests.map((q) => q.from > 0)).toEqual([false, false, true, true]);
      const into = join(base, "cp-file");
      const fh = await open(into, "w");
      try {
        expect(await cache.fetcher()(sources[1]!, fh)).toBe(sources[1]!.sha256);
      } finally {
        await fh.close();
      }
      expect(readFileSync(into).equals(contents[1]!)).toBe(true);
      // Read from what was downloaded ahead: no request more.
      expect(cut.requests).toHaveLength(4);
      await cache.settle([]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await new Promise((r) => cpServer.close(r));
    }
  });
});
