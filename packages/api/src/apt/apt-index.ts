// Builds one signed apt repository into an empty directory with Debian's own tools:
// dpkg-scanpackages writes each architecture's Packages, apt-ftparchive the Release, gpg signs it.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import type { PoolDeb } from "./apt-pool";
import { gpg, stopGpgAgent, type AptSigningKey } from "./apt-signing-key";
import { runTool } from "./apt-tools";

export const SUITE = "stable";
export const COMPONENT = "main";
/** Hosts are x86_64 and aarch64 (the downloads serve both): their indexes exist even while empty. */
export const BASE_ARCHES = ["amd64", "arm64"];

export interface BuiltIndex {
  /**
   * Paths inside the repository (as requested under /apt/) -> the file that answers: relative to the
   * build directory (which is renamed into place afterwards) for what was generated, absolute for a .deb.
   */
  files: Map<string, string>;
  arches: string[];
}

/** Architectures to index: the base ones and any a .deb is built for ("all" goes into each). */
export function indexArches(debs: PoolDeb[]): string[] {
  return [...new Set([...BASE_ARCHES, ...debs.map((d) => d.arch).filter((a) => a !== "all")])].sort();
}

export async function buildAptIndex(opts: { dir: string; debs: PoolDeb[]; key: AptSigningKey; validForMs: number }): Promise<BuiltIndex> {
  const { dir, debs, key } = opts;
  const files = new Map<string, string>();
  const pool = path.join(dir, "pool", COMPONENT);
  fs.mkdirSync(pool, { recursive: true });
  for (const deb of debs) {
    // dpkg-scanpackages follows the link; the file is served from where it lies.
    fs.symlinkSync(deb.file, path.join(pool, deb.name));
    files.set(`pool/${COMPONENT}/${deb.name}`, deb.file);
  }
  const arches = indexArches(debs);
  const dists = path.join(dir, "dists", SUITE);
  for (const arch of arches) {
    const rel = `${COMPONENT}/binary-${arch}`;
    fs.mkdirSync(path.join(dists, rel), { recursive: true });
    const packages = path.join(dists, rel, "Packages");
    await runTool(["dpkg-scanpackages", "--multiversion", "--arch", arch, "pool", "/dev/null"], {
      cwd: dir,
      stdoutFile: packages,
      timeoutMs: 300_000,
      env: { LC_ALL: "C" },
    });
    fs.writeFileSync(`${packages}.gz`, zlib.gzipSync(fs.readFileSync(packages), { level: 9 }));
    files.set(`dists/${SUITE}/${rel}/Packages`, `dists/${SUITE}/${rel}/Packages`);
    files.set(`dists/${SUITE}/${rel}/Packages.gz`, `dists/${SUITE}/${rel}/Packages.gz`);
  }
  const field = (name: string, value: string) => ["-o", `APT::FTPArchive::Release::${name}=${value}`];
  const release = path.join(dists, "Release");
  await runTool(
    [
      "apt-ftparchive",
      ...field("Origin", "Mesh"),
      ...field("Label", "Mesh"),
      ...field("Suite", SUITE),
      ...field("Codename", SUITE),
      ...field("Architectures", arches.join(" ")),
      ...field("Components", COMPONENT),
      ...field("Description", "mesh-host and the packages of this Mesh control plane"),
      // Valid-Until, this long after Date: a frozen copy of this index (an old, validly signed one
      // replayed by whoever sits between apt and here) stops being accepted.
      ...field("ValidTime", String(Math.ceil(opts.validForMs / 1000))),
      "release",
      `dists/${SUITE}`,
    ],
    { cwd: dir, stdoutFile: `${release}.new`, timeoutMs: 120_000, env: { LC_ALL: "C" } },
  );
  fs.renameSync(`${release}.new`, release);
  try {
    const signWith = ["--local-user", key.fingerprint, "--digest-algo", "SHA512", "--yes"];
    await gpg(key.gnupgHome, [...signWith, "--clearsign", "--output", path.join(dists, "InRelease"), release]);
    await gpg(key.gnupgHome, [...signWith, "--armor", "--detach-sign", "--output", path.join(dists, "Release.gpg"), release]);
  } finally {
    await stopGpgAgent(key.gnupgHome);
  }
  for (const name of ["Release", "InRelease", "Release.gpg"]) files.set(`dists/${SUITE}/${name}`, `dists/${SUITE}/${name}`);
  fs.writeFileSync(path.join(dir, "mesh.gpg"), key.publicKeyring);
  files.set("mesh.gpg", "mesh.gpg");
  return { files, arches };
}
