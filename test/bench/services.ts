// The host's own service supervisor (systemd not PID 1): how long a reconcile takes to start
// N services, the RSS of each supervisor, how fast a killed service is back (each once, RestartSec=0),
// and how long stopping all of them takes.
// Run: npm run bench:services -w @mesh/test (run `npm run build -w @mesh/agent` first).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Declaration } from "@mesh/protocol";
import { reconcile } from "@mesh/agent/src/reconcile/reconcile";
import { Root } from "@mesh/agent/src/resources/root";
import { MemoryStore } from "@mesh/agent/src/store/memory-store";
import { silentLogger } from "@mesh/agent/src/log";
import { HOST_BIN } from "../harness/paths";
import { waitFor } from "../harness/wait";

const N = Number(process.env.MESH_BENCH_SERVICES ?? 10);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
const status = (root: string, unit: string) => JSON.parse(fs.readFileSync(path.join(root, "run/mesh-host/services", `${unit}.json`), "utf8"));

const rootDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-svc-"));
fs.mkdirSync(path.join(rootDir, "etc/systemd/system"), { recursive: true });
const store = new MemoryStore();
const deps = { store, root: new Root(rootDir), log: silentLogger(), enrolled: false, systemdIsPid1: false, hostCommand: [process.execPath, HOST_BIN] };
const units = Array.from({ length: N }, (_, i) => `bench-${i}.service`);
const resources = (state: "running" | "stopped") =>
  units.map((unit, i) => ({ type: "service", id: `s${i}`, unit, content: "[Service]\nExecStart=/bin/sleep 100000\nRestart=always\nRestartSec=0\n", state }));

let t = performance.now();
const up = await reconcile(deps, { declaration: Declaration.parse({ version: 1, resources: resources("running") }) });
const startMs = performance.now() - t;
if (up.report.errors.length) throw new Error(JSON.stringify(up.report.errors));
const rss = units.map((u) => rssKb(status(rootDir, u).supervisor.pid));

t = performance.now();
const noop = await reconcile(deps, { declaration: Declaration.parse({ version: 1, resources: resources("running") }) });
const noopMs = performance.now() - t;
if (noop.changes.length) throw new Error("the second reconcile changed something");

const back: number[] = [];
for (const unit of units) {
  const before = status(rootDir, unit).main.pid;
  const killed = performance.now();
  process.kill(before, "SIGKILL");
  await waitFor(
    "the restart",
    () => {
      const s = status(rootDir, unit);
      return s.state === "active" && s.main && s.main.pid !== before;
    },
    10_000,
    1,
  );
  back.push(performance.now() - killed);
}

t = performance.now();
const down = await reconcile(deps, { declaration: Declaration.parse({ version: 2, resources: resources("stopped") }) });
const stopMs = performance.now() - t;
if (down.report.errors.length) throw new Error(JSON.stringify(down.report.errors));
await reconcile(deps, { declaration: Declaration.parse({ version: 3, resources: [] }) });
fs.rmSync(rootDir, { recursive: true, force: true });

console.log(`services: ${N} supervised by mesh-host supervise (node ${process.version}, ${os.cpus().length} cores)`);
console.log(`  start all (one reconcile):   ${startMs.toFixed(0)} ms (${(startMs / N).toFixed(0)} ms per service)`);
console.log(`  no-op reconcile:             ${noopMs.toFixed(1)} ms`);
console.log(
  `  supervisor RSS:              median ${(median(rss) / 1024).toFixed(1)} MB (min ${(Math.min(...rss) / 1024).toFixed(1)}, max ${(Math.max(...rss) / 1024).toFixed(1)})`,
);
console.log(
  `  killed -> running again:     median ${median(back).toFixed(0)} ms of ${back.length} (min ${Math.min(...back).toFixed(0)}, max ${Math.max(...back).toFixed(0)})`,
);
console.log(`  stop all (one reconcile):    ${stopMs.toFixed(0)} ms`);
