// The crash rig shared by the chaos test and the chaos bench: a 200-resource
// declaration in two variants, mesh-host apply killed at random instants and at named fail points.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ownership } from "@mesh/agent/src/store/ownership";
import { HOST_BIN } from "./paths";

/** The agent's named steps (apps/agent/src/failpoint.ts), with how many hits an apply surely makes. */
const FAILPOINTS: [step: string, maxHits: number][] = [
  // Bounds are what every switch between the variants surely reaches, so a fail point always fires.
  ["intents-resolved", 1],
  ["snapshot-written", 10],
  ["intent-written", 2],
  ["temp-written", 25],
  ["applied-before-record", 40],
  ["remove-before-record", 30],
  ["record-written", 2],
];

type Resource = { type: string; id: string; path: string; [k: string]: unknown };

/**
 * Variant 0 and 1 differ in every way a reconcile can: files created, updated
 * (content, mode), removed with their directories, symlinks retargeted, and
 * files that stood there before the host adopted and later restores (variant 1 only).
 */
export function chaosDeclaration(variant: 0 | 1, version: number): { version: number; resources: Resource[] } {
  const resources: Resource[] = [{ type: "directory", id: "srv", path: "/srv", mode: "0755" }];
  const dirs = variant === 0 ? range(0, 18) : range(4, 22);
  for (const d of dirs) {
    const dir = `/srv/d${pad(d)}`;
    resources.push({ type: "directory", id: `d${pad(d)}`, path: dir, mode: d % 3 === 0 && variant === 1 ? "0750" : "0755" });
    for (let f = 0; f < 7; f++) {
      const changed = variant === 1 && (d + f) % 4 === 0;
      resources.push({
        type: "file",
        id: `d${pad(d)}-f${f}`,
        path: `${dir}/f${f}.conf`,
        content: `dir ${d} file ${f}${changed ? " v2" : ""}\n`.repeat(20),
        mode: changed && f % 2 ? "0600" : "0644",
      });
    }
    resources.push({ type: "symlink", id: `d${pad(d)}-l`, path: `${dir}/current`, target: variant === 1 && d % 2 ? "f1.conf" : "f0.conf" });
  }
  if (variant === 1)
    for (const p of range(0, 10)) resources.push({ type: "file", id: `pre${pad(p)}`, path: `/etc/pre${pad(p)}`, content: `managed ${p}\n`, mode: "0640" });
  return { version, resources: resources.slice(0, 200) };
}

const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
const pad = (n: number) => String(n).padStart(2, "0");
const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

export interface ChaosStats {
  kills: number;
  /** Kills after which the restart and every check found nothing wrong. */
  recovered: number;
  randomKills: number;
  failpointKills: Record<string, number>;
  orphans: number;
  lostRecords: number;
  problems: string[];
  ms: number;
}

export class ChaosRig {
  readonly base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-chaos-"));
  readonly root = path.join(this.base, "root");
  readonly state = path.join(this.base, "state");
  private readonly files: string[] = [];
  private version = 0;
  /** Files that stood on the machine before the host: adopted by variant 1, restored by variant 0. */
  private readonly originals = new Map<string, string>();

  constructor() {
    fs.mkdirSync(path.join(this.root, "etc"), { recursive: true });
    for (const p of range(0, 10)) {
      const file = `/etc/pre${pad(p)}`;
      fs.writeFileSync(this.at(file), `original ${p}\n`);
      this.originals.set(file, `original ${p}\n`);
    }
  }

  at(p: string) {
    return path.join(this.root, p);
  }

  dispose() {
    fs.rmSync(this.base, { recursive: true, force: true });
  }

  private declFile(variant: 0 | 1): { file: string; decl: ReturnType<typeof chaosDeclaration> } {
    const decl = chaosDeclaration(variant, ++this.version);
    const file = path.join(this.base, `decl-${this.version}.json`);
    fs.writeFileSync(file, JSON.stringify(decl));
    this.files.push(file);
    return { file, decl };
  }

  /** One `mesh-host apply`, SIGKILLed after `killAfterMs` or by the fail point given. */
  apply(
    file: string,
    opts: { killAfterMs?: number; failpoint?: string; json?: boolean } = {},
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [HOST_BIN, "apply", "--file", file, "--state-dir", this.state, "--root", this.root, ...(opts.json ? ["--json"] : [])],
        {
          env: { ...process.env, MESH_LOG_LEVEL: "error", ...(opts.failpoint ? { MESH_FAILPOINT: opts.failpoint } : {}) },
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      const timer = setTimeout(() => child.kill("SIGKILL"), opts.killAfterMs ?? 60_000);
      child.once("error", reject);
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  /** How long a full switch between the variants takes, to pick random instants inside it. */
  async calibrate(): Promise<number> {
    const a = this.declFile(0).file;
    const b = this.declFile(1).file;
    await this.apply(a);
    const t0 = performance.now();
    await this.apply(b);
    const ms = performance.now() - t0;
    await this.apply(a);
    return ms;
  }

  private readStore(): Ownership | null {
    const file = path.join(this.state, "store.json");
    if (!fs.existsSync(file)) return null;
    return Ownership.parse(JSON.parse(fs.readFileSync(file, "utf8")));
  }

  /** Everything under the root but the skeleton, as declared paths ("/srv/d01/f0.conf"). */
  private onDisk(): string[] {
    const out: string[] = [];
    const walk = (rel: string) => {
      for (const name of fs.readdirSync(this.at(rel))) {
        const p = `${rel}/${name}`;
        out.push(p);
        const st = fs.lstatSync(this.at(p));
        if (st.isDirectory()) walk(p);
      }
    };
    walk("");
    return out.filter((p) => p !== "/etc");
  }

  /** Right after a kill: the store parses, and everything the host made on disk has a record (an intent at least). */
  checkAfterKill(problems: string[]): { orphans: number } {
    let store: Ownership | null;
    try {
      store = this.readStore();
    } catch (err) {
      problems.push(`store does not parse after a kill: ${(err as Error).message}`);
      return { orphans: 0 };
    }
    const recorded = new Map((store?.records ?? []).map((r) => [r.subject.replace(/^path:/, ""), r]));
    let orphans = 0;
    for (const p of this.onDisk()) {
      if (this.originals.has(p)) continue;
      const temp = /^(.*)\/\.([^/]+)\.mesh-tmp$/.exec(p);
      if (temp) {
        const of = recorded.get(`${temp[1]}/${temp[2]}`);
        if (!of?.intent) orphans++, problems.push(`temp file ${p} with no open intent`);
        continue;
      }
      if (!recorded.has(p)) orphans++, problems.push(`orphan after kill: ${p} is on disk with no record`);
    }
    return { orphans };
  }

  /** After a full apply: owned = declared = on disk, no intent left, originals back where not declared. */
  checkSettled(
    decl: ReturnType<typeof chaosDeclaration>,
    report: { owned: { id: string }[]; errors: unknown[] },
    problems: string[],
  ): { orphans: number; lost: number } {
    let orphans = 0;
    let lost = 0;
    const store = this.readStore();
    if (!store) {
      problems.push("no store after a full apply");
      return { orphans, lost: 1 };
    }
    if (report.errors.length) problems.push(`errors after restart: ${JSON.stringify(report.errors).slice(0, 300)}`);
    const declared = new Set(decl.resources.map((r) => r.path));
    const owned = new Set(report.owned.map((o) => o.id));
    for (const r of decl.resources) {
      const exists = fs.existsSync(this.at(r.path)) || isLink(this.at(r.path));
      if (!exists) lost++, problems.push(`declared ${r.path} is not on disk`);
      else if (!owned.has(r.id)) lost++, problems.push(`declared ${r.path} is on disk but not owned`);
      if (r.type === "file" && exists && sha(fs.readFileSync(this.at(r.path))) !== sha(String(r.content))) problems.push(`${r.path} has the wrong content`);
    }
    for (const rec of store.records) {
      const p = rec.subject.replace(/^path:/, "");
      if (rec.intent) problems.push(`intent left open for ${p}`);
      if (!fs.existsSync(this.at(p)) && !isLink(this.at(p))) lost++, problems.push(`owned ${p} is missing`);
      if (!declared.has(p)) lost++, problems.push(`record for ${p}, which is not declared`);
    }
    for (const p of this.onDisk()) {
      if (declared.has(p)) continue;
      if (this.originals.has(p)) {
        if (fs.readFileSync(this.at(p), "utf8") !== this.originals.get(p)) problems.push(`${p} was not restored`);
        continue;
      }
      orphans++;
      problems.push(`orphan: ${p} is on disk but neither declared nor owned`);
    }
    return { orphans, lost };
  }

  /** Kill, check, restart to completion, check, apply again and check that nothing changes; `kills` times. */
  /** `firstFailpoint`: where in the list of fail points this rig starts, so that parallel rigs cover all of them early. */
  async run(kills: number, opts: { seed?: number; firstFailpoint?: number; log?: (line: string) => void } = {}): Promise<ChaosStats> {
    const started = performance.now();
    const random = mulberry32(opts.seed ?? 1);
    const span = await this.calibrate();
    const stats: ChaosStats = { kills: 0, recovered: 0, randomKills: 0, failpointKills: {}, orphans: 0, lostRecords: 0, problems: [], ms: 0 };
    let variant: 0 | 1 = 1;
    let attempt = 0;
    let failpoints = opts.firstFailpoint ?? 0;
    while (stats.kills < kills && attempt < kills * 4) {
      const plan: ({ killAfterMs: number } | { failpoint: string })[] = [];
      // Two random instants, then two fail points, and so on: the variant flips every
      // attempt, so each fail point meets both directions of the switch over two rounds.
      if (Math.floor(attempt / 2) % 2 === 0) {
        plan.push({ killAfterMs: Math.round(40 + random() * span) });
      } else {
        const [step, max] = FAILPOINTS[failpoints++ % FAILPOINTS.length]!;
        // Only a switch to variant 1 adopts (and so keeps originals): settle on 0 first.
        if (step === "snapshot-written" && variant === 0) {
          await this.apply(this.declFile(0).file);
          variant = 1;
        }
        // Intents are settled only at the start after a kill: kill once mid-apply first.
        if (step === "intents-resolved") plan.push({ failpoint: `applied-before-record:${1 + Math.floor(random() * 20)}` });
        plan.push({ failpoint: `${step}:${1 + Math.floor(random() * max)}` });
      }
      attempt++;
      const { file, decl } = this.declFile(variant);
      const problemsBefore = stats.problems.length;
      const killsBefore = stats.kills;
      for (const how of plan) {
        const r = await this.apply(file, how);
        if (r.signal !== "SIGKILL") continue;
        stats.kills++;
        if ("failpoint" in how) {
          const step = how.failpoint.split(":")[0]!;
          stats.failpointKills[step] = (stats.failpointKills[step] ?? 0) + 1;
        } else stats.randomKills++;
        stats.orphans += this.checkAfterKill(stats.problems).orphans;
      }
      const restart = await this.apply(file, { json: true });
      if (restart.code !== 0 && restart.code !== 1) {
        stats.problems.push(`restart exited ${restart.code} ${restart.signal ?? ""}: ${restart.stderr.slice(0, 300)}`);
        continue;
      }
      const settled = this.checkSettled(decl, JSON.parse(restart.stdout), stats.problems);
      stats.orphans += settled.orphans;
      stats.lostRecords += settled.lost;
      const again = await this.apply(file);
      if (again.code !== 0 || !/: 0 created, 0 adopted, 0 updated, 0 removed, 0 restored, 0 released, \d+ unchanged, 0 errors, 0 skipped;/.test(again.stdout)) {
        stats.problems.push(`a second apply changed something: ${again.stdout.trim().split("\n").slice(-3).join(" / ")}`);
      }
      if (stats.problems.length === problemsBefore) stats.recovered += stats.kills - killsBefore;
      opts.log?.(
        `kill ${stats.kills}/${kills}: ${plan.map((p) => ("failpoint" in p ? p.failpoint : `${p.killAfterMs} ms`)).join(", ")} -> ${stats.problems.length} problems`,
      );
      variant = variant === 0 ? 1 : 0;
    }
    stats.ms = performance.now() - started;
    return stats;
  }
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A small seeded generator, so that a failing run can be repeated. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Several rigs at once (one per core), each with its own root and state dir and its share of the kills. */
export async function runChaos(kills: number, opts: { rigs?: number; seed: number; log?: (line: string) => void }): Promise<ChaosStats> {
  const n = opts.rigs ?? Math.max(1, Math.min(4, os.availableParallelism()));
  const rigs = Array.from({ length: n }, () => new ChaosRig());
  try {
    const share = (i: number) => Math.floor(kills / n) + (i < kills % n ? 1 : 0);
    const all = await Promise.all(
      rigs.map((rig, i) =>
        rig.run(share(i), {
          seed: opts.seed + i,
          firstFailpoint: Math.ceil((i * FAILPOINTS.length) / n),
          log: opts.log && ((line) => opts.log!(`[rig ${i}] ${line}`)),
        }),
      ),
    );
    const total: ChaosStats = { kills: 0, recovered: 0, randomKills: 0, failpointKills: {}, orphans: 0, lostRecords: 0, problems: [], ms: 0 };
    for (const s of all) {
      total.kills += s.kills;
      total.recovered += s.recovered;
      total.randomKills += s.randomKills;
      for (const [k, v] of Object.entries(s.failpointKills)) total.failpointKills[k] = (total.failpointKills[k] ?? 0) + v;
      total.orphans += s.orphans;
      total.lostRecords += s.lostRecords;
      total.problems.push(...s.problems);
      total.ms = Math.max(total.ms, s.ms);
    }
    return total;
  } finally {
    for (const rig of rigs) rig.dispose();
  }
}
