// Source downloads over a slow, lossy link (issue 12, item 8): a 300-file apply whose files come
// from a server that answers each request +500 ms late, sends slowly, and cuts 20 % of the
// connections partway (what a lossy link does to a download). `mesh-host apply` is run until
// every file is in place (a host that cannot resume fails the cut files and fetches them again on
// its next reconcile); prints passes and the time taken. netem is not available on this machine's
// kernel, so the link is the server's doing (slow-source-server.fixture.ts).
// Run: npx tsx bench/source-downloads.ts [path/to/mesh-host.js]  (default: the built host)
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { serveSlowly } from "@mesh/agent/src/resources/slow-source-server.fixture";
import { HOST_BIN } from "../harness/paths";

const FILES = Number(process.env.MESH_BENCH_FILES ?? 300);
const SIZE = 16 * 1024;
const bin = process.argv[2] ?? HOST_BIN;

// Seeded choice of cut connections: the same 20 % for every host measured.
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
const cuts = new Map<string, boolean>();
const contents = Array.from({ length: FILES }, () => randomBytes(SIZE));
const slow = serveSlowly(contents, {
  latencyMs: 500,
  chunkBytes: 4 * 1024,
  chunkDelayMs: 50,
  cut: (file, attempt) => {
    const key = `${file}/${attempt}`;
    if (!cuts.has(key)) cuts.set(key, rand() < 0.2);
    return cuts.get(key)!;
  },
});
const server = createServer(slow.handler);
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-sources-"));
const root = path.join(base, "root");
fs.mkdirSync(path.join(root, "srv"), { recursive: true });
const decl = path.join(base, "decl.json");
const resources = contents.map((c, i) => ({
  type: "file",
  id: `f${i}`,
  path: `/srv/f${i}`,
  mode: "0644",
  source: { url: `${url}/f/${i}`, sha256: createHash("sha256").update(c).digest("hex") },
}));
fs.writeFileSync(decl, JSON.stringify({ version: 1, resources }));

const apply = () =>
  new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [bin, "apply", "--file", decl, "--state-dir", path.join(base, "state"), "--root", root], {
      env: { ...process.env, MESH_LOG_LEVEL: "silent" },
      stdio: "ignore",
    });
    child.on("close", resolve);
  });

const started = Date.now();
let passes = 0;
let code: number | null = 1;
while (code !== 0 && passes < 20) {
  code = await apply();
  passes++;
}
const seconds = (Date.now() - started) / 1000;
const right = contents.every((c, i) => fs.existsSync(path.join(root, "srv", `f${i}`)) && fs.readFileSync(path.join(root, "srv", `f${i}`)).equals(c));
console.log(
  JSON.stringify({
    files: FILES,
    host: bin,
    seconds: Number(seconds.toFixed(1)),
    passes,
    allFilesRight: right,
    requests: slow.requests.length,
    resumed: slow.requests.filter((r) => r.from > 0).length,
    maxInFlight: slow.maxInFlight,
  }),
);
server.close();
fs.rmSync(base, { recursive: true, force: true });
