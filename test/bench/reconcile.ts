// Reconcile figures: no-op reconcile of 1,000 files (goal <= 200 ms), a full apply
// of 1,000 files, store size per resource, and host idle RSS (goal <= 60 MB).
// Run: npm run bench:reconcile -w @mesh/test (run `npm run build -w @mesh/agent` first);
// MESH_BENCH_NODE_FLAGS adds node flags to the idle host, MESH_BENCH_IDLE_MS sets how long idle is.
import { spawn, spawnSync } from "node:child_process";
import { createPublicKey, generateKeyPairSync, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Declaration } from "@mesh/protocol";
import { reconcile } from "@mesh/agent/src/reconcile/reconcile";
import { Root } from "@mesh/agent/src/resources/root";
import { DiskStore } from "@mesh/agent/src/store/disk-store";
import { silentLogger } from "@mesh/agent/src/log";
import { HOST_BIN } from "../harness/paths";
import { startControlPlane } from "@mesh/agent/src/link/fake-control-plane";
import { sleep, waitFor } from "../harness/wait";

const N = 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function declaration(version: number, tag = "") {
  const resources: unknown[] = [];
  for (let d = 0; d < 20; d++) {
    resources.push({ type: "directory", id: `d${d}`, path: `/srv/d${d}`, mode: "0755" });
    for (let f = 0; f < N / 20; f++)
      resources.push({ type: "file", id: `d${d}-f${f}`, path: `/srv/d${d}/f${f}.conf`, content: `setting ${d}.${f} = on${tag}\n`.repeat(8), mode: "0644" });
  }
  resources.unshift({ type: "directory", id: "srv", path: "/srv", mode: "0755" });
  return Declaration.parse({ version, resources });
}

async function inProcess() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-"));
  const rootDir = path.join(base, "root");
  fs.mkdirSync(rootDir);
  const store = new DiskStore(path.join(base, "state"));
  await store.init();
  const deps = { store, root: new Root(rootDir), log: silentLogger(), enrolled: false };
  const decl = declaration(1);
  const files = decl.resources.filter((r) => r.type === "file").length;

  let t0 = performance.now();
  const first = await reconcile(deps, { declaration: decl });
  const fullApply = performance.now() - t0;
  if (first.report.errors.length) throw new Error(JSON.stringify(first.report.errors.slice(0, 3)));

  const noops: number[] = [];
  for (let i = 0; i < 7; i++) {
    t0 = performance.now();
    const r = await reconcile(deps, { declaration: decl });
    noops.push(performance.now() - t0);
    if (r.changes.length) throw new Error("a no-op reconcile changed something");
  }

  t0 = performance.now();
  await reconcile(deps, { declaration: declaration(2, " (v2)") });
  const fullUpdate = performance.now() - t0;

  const storeBytes = fs.statSync(path.join(base, "state", "store.json")).size;
  fs.rmSync(base, { recursive: true, force: true });
  return { files, resources: decl.resources.length, fullApply, noop: median(noops), fullUpdate, storeBytes };
}

function cliNoop() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-"));
  fs.mkdirSync(path.join(base, "root"));
  const file = path.join(base, "decl.json");
  fs.writeFileSync(file, JSON.stringify(declaration(1)));
  const args = [HOST_BIN, "apply", "--file", file, "--root", path.join(base, "root"), "--state-dir", path.join(base, "state")];
  let t0 = performance.now();
  spawnSync(process.execPath, args);
  const apply = performance.now() - t0;
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    t0 = performance.now();
    spawnSync(process.execPath, args);
    runs.push(performance.now() - t0);
  }
  fs.rmSync(base, { recursive: true, force: true });
  return { apply, noop: median(runs) };
}

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]);

/**
 * `mesh-host run` idle: hosted (not enrolled); enrolled against a control plane that is
 * not there; and linked to a (test) control plane after reconciling 1,000 files.
 */
async function idleRss() {
  const out: Record<string, number> = {};
  for (const kind of ["hosted", "enrolled", "linked"] as const) {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-"));
    fs.mkdirSync(path.join(base, "root"));
    const state = path.join(base, "state");
    fs.mkdirSync(state, { mode: 0o700 });
    let cp: Awaited<ReturnType<typeof startControlPlane>> | null = null;
    if (kind !== "hosted") {
      const { publicKey, privateKey } = generateKeyPairSync("ed25519");
      if (kind === "linked") {
        const frame = JSON.stringify({ type: "declaration", declaration: declaration(1) });
        cp = await startControlPlane(publicKey, (ws) => ws.send(frame));
      }
      fs.writeFileSync(path.join(state, "node.key"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
      const identity = {
        nodeId: randomUUID(),
        name: "bench",
        labels: {},
        controlPlaneUrl: cp?.url ?? "http://127.0.0.1:9",
        publicKey: createPublicKey(privateKey).export({ type: "spki", format: "der" }).toString("base64"),
        enrolledAt: new Date().toISOString(),
      };
      fs.writeFileSync(path.join(state, "identity.json"), JSON.stringify(identity), { mode: 0o600 });
      fs.writeFileSync(path.join(state, "store.json"), JSON.stringify({ format: 2, records: [] }));
    }
    const child = spawn(
      process.execPath,
      [
        ...(process.env.MESH_BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean),
        HOST_BIN,
        "run",
        "--root",
        path.join(base, "root"),
        "--state-dir",
        state,
        "--interval",
        "300",
      ],
      {
        env: { ...process.env, MESH_LOG_LEVEL: "warn" },
        stdio: "ignore",
      },
    );
    if (cp) {
      const linked = cp;
      await waitFor("the report of 1,000 files", () => linked.reports.some((r) => r.owned.length === N + 21), 120_000);
    }
    // Idle means idle: V8 gives back the pages a big reconcile grew after a few seconds of quiet.
    await sleep(Number(process.env.MESH_BENCH_IDLE_MS ?? 15_000));
    out[kind] = rssKb(child.pid!) / 1024;
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await cp?.close();
    fs.rmSync(base, { recursive: true, force: true });
  }
  return out;
}

async function main() {
  const r = await inProcess();
  const cli = cliNoop();
  const rss = await idleRss();
  console.log(`resources: ${r.resources} (${r.files} files, ${r.resources - r.files} directories)`);
  console.log(`no-op reconcile of ${r.files} files: ${r.noop.toFixed(0)} ms (in process, median of 7; goal <= 200 ms)`);
  console.log(`full apply of ${r.files} files: ${r.fullApply.toFixed(0)} ms; full update of all of them: ${r.fullUpdate.toFixed(0)} ms`);
  console.log(`mesh-host apply --file (new process): first ${cli.apply.toFixed(0)} ms, no-op ${cli.noop.toFixed(0)} ms`);
  console.log(
    `store.json: ${(r.storeBytes / 1024).toFixed(0)} KB for ${r.resources} resources = ${(r.storeBytes / r.resources).toFixed(0)} bytes per resource`,
  );
  console.log(
    `host idle RSS (mesh-host run; goal <= 60 MB): hosted ${rss.hosted!.toFixed(0)} MB, enrolled with the control plane unreachable ${rss.enrolled!.toFixed(0)} MB, ` +
      `linked after reconciling ${r.files} files ${rss.linked!.toFixed(0)} MB`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
