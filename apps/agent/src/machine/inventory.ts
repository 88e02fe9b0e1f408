// The inventory: what this machine has (packages, units, listening ports,
// mounts), bounded by LIMITS; `truncated` says a list was cut.
import { promises as fs } from "node:fs";
import { LIMITS, type Inventory } from "@mesh/protocol";
import { short } from "./profile";
import { ProcessRunner } from "../runner/process-runner";
import { outputOf, type Runner } from "../runner/runner";

/** Listings are read whole: thousands of packages are megabytes. */
const LISTING = { timeoutMs: 15_000, maxOutputBytes: 64 * 1024 * 1024 };

async function packages(manager: string, runner: Runner): Promise<Inventory["packages"]> {
  if (manager !== "dpkg") return [];
  const out = await outputOf(runner, ["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n"], LISTING);
  if (!out) return [];
  return out
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((f) => f.length === 3 && f[0]!.startsWith("ii"))
    .map((f) => ({ name: short(f[1]!), version: short(f[2]!) }));
}

async function units(init: string, runner: Runner): Promise<Inventory["units"]> {
  if (init !== "systemd") return [];
  const out = await outputOf(runner, ["systemctl", "list-units", "--all", "--no-legend", "--plain", "--no-pager", "--type=service"], LISTING);
  if (!out) return [];
  return out
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4 && f[0]!.endsWith(".service"))
    .map((f) => ({ name: short(f[0]!), state: short(`${f[2]}/${f[3]}`) }));
}

/** Listening TCP sockets (state 0A) and bound UDP ones (state 07) from /proc/net. */
export function parseProcNet(text: string, proto: "tcp" | "udp" | "tcp6" | "udp6"): Inventory["ports"] {
  const want = proto.startsWith("tcp") ? "0A" : "07";
  const out: Inventory["ports"] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || f[3] !== want) continue;
    const port = parseInt(f[1]!.split(":")[1] ?? "", 16);
    if (Number.isInteger(port) && port >= 0 && port <= 65535) out.push({ proto, port });
  }
  return out;
}

async function ports(): Promise<Inventory["ports"]> {
  const seen = new Set<string>();
  const out: Inventory["ports"] = [];
  for (const proto of ["tcp", "tcp6", "udp", "udp6"] as const) {
    const text = await fs.readFile(`/proc/net/${proto}`, "utf8").catch(() => "");
    for (const p of parseProcNet(text, proto)) {
      const key = `${p.proto}/${p.port}`;
      if (!seen.has(key)) seen.add(key), out.push(p);
    }
  }
  return out.sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto));
}

/** /proc/mounts escapes space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

async function mounts(): Promise<Inventory["mounts"]> {
  const text = await fs.readFile("/proc/mounts", "utf8").catch(() => "");
  return text
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f.length >= 3)
    .map((f) => ({ source: short(unescapeMount(f[0]!)), target: unescapeMount(f[1]!).slice(0, LIMITS.path), fstype: short(f[2]!) }));
}

export async function collectInventory(facts: { packageManager: string; initSystem: string }, runner: Runner = new ProcessRunner()): Promise<Inventory> {
  const [p, u, o, m] = await Promise.all([packages(facts.packageManager, runner), units(facts.initSystem, runner), ports(), mounts()]);
  const truncated = p.length > LIMITS.packages || u.length > LIMITS.units || o.length > LIMITS.ports || m.length > LIMITS.mounts;
  return {
    packages: p.slice(0, LIMITS.packages),
    units: u.slice(0, LIMITS.units),
    ports: o.slice(0, LIMITS.ports),
    mounts: m.slice(0, LIMITS.mounts),
    truncated,
  };
}
