// The profile: what this machine can run (OS, release, arch, kernel, CPUs,
// memory, disk, init system, package manager). Read from the running machine.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HostInstall, Profile } from "@mesh/protocol";
import { runningAsSea, runningBinaryPath } from "../self-upgrade/binary-path";
import { HOST_VERSION } from "../version";
import { ProcessRunner } from "../runner/process-runner";
import { outputOf, type Runner } from "../runner/runner";

const SHORT = 256;

export function short(s: string): string {
  return s.length > SHORT ? s.slice(0, SHORT) : s;
}

export async function readOsRelease(): Promise<Record<string, string>> {
  for (const p of ["/etc/os-release", "/usr/lib/os-release"]) {
    const text = await fs.readFile(p, "utf8").catch(() => null);
    if (text === null) continue;
    const out: Record<string, string> = {};
    for (const line of text.split("\n")) {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (m) out[m[1]!] = m[2]!.replace(/^["']|["']$/g, "");
    }
    return out;
  }
  return {};
}

/** What PID 1 is: "systemd" when systemd runs the machine, else its command name. */
export async function initSystem(): Promise<string> {
  const comm = await fs.readFile("/proc/1/comm", "utf8").then(
    (s) => s.trim(),
    () => "",
  );
  return comm || "unknown";
}

async function onPath(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
    if (!dir) continue;
    try {
      await fs.access(`${dir}/${name}`, fs.constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

export async function packageManager(): Promise<string> {
  for (const [tool, name] of [
    ["dpkg-query", "dpkg"],
    ["rpm", "rpm"],
    ["apk", "apk"],
    ["pacman", "pacman"],
  ] as const) {
    if (await onPath(tool)) return name;
  }
  return "none";
}

async function diskBytes(): Promise<number> {
  try {
    const s = await fs.statfs("/");
    return s.bsize * s.blocks;
  } catch {
    return 0;
  }
}

/**
 * How this host was installed: "deb" when dpkg (the root's database) says the running binary is
 * the mesh-host package's file, "tarball" for the single executable otherwise, "script" for the bundle.
 */
export async function hostInstall(root = "/", binary = runningBinaryPath(), sea = runningAsSea(), runner: Runner = new ProcessRunner()): Promise<HostInstall> {
  if (!sea) return "script";
  const rel = root === "/" ? binary : `/${path.relative(root, binary)}`;
  if (rel.startsWith("/..")) return "tarball";
  const args = [...(root === "/" ? [] : [`--admindir=${path.join(root, "var/lib/dpkg")}`]), "-S", rel];
  const owner = (await outputOf(runner, ["dpkg-query", ...args], { timeoutMs: 10_000 })) ?? "";
  // "mesh-host: /usr/bin/mesh-host" (or "mesh-host:amd64: ...").
  return /^mesh-host(:[a-z0-9-]+)?: /m.test(owner) ? "deb" : "tarball";
}

export async function collectProfile(machineId: string, root = "/", runner: Runner = new ProcessRunner()): Promise<Profile> {
  const rel = await readOsRelease();
  return {
    hostname: short(os.hostname()),
    os: short(rel.ID ?? os.platform()),
    osRelease: short(rel.PRETTY_NAME ?? `${os.type()} ${os.release()}`),
    osVersionId: short(rel.VERSION_ID ?? ""),
    kernel: short(os.release()),
    // uname -m, as operators write selectors ("x86_64", "aarch64"), not Node's "x64".
    arch: short(os.machine()),
    cpus: os.cpus().length,
    memoryBytes: os.totalmem(),
    diskBytes: await diskBytes(),
    initSystem: short(await initSystem()),
    packageManager: await packageManager(),
    machineId,
    hostVersion: HOST_VERSION,
    hostInstall: await hostInstall(root, runningBinaryPath(), runningAsSea(), runner),
  };
}
