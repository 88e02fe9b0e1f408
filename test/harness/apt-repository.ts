// A control plane serving an apt repository of given .debs (copied into its data directory's
// apt/pool), with the key fetched from /apt/mesh.gpg and the sources line a machine would use;
// and apt-get/apt-cache run in a sandbox directory that never touches this machine's apt state.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ControlPlane, type Engine } from "./control-plane";
import { waitFor } from "./wait";

// The tiny .deb the api package's apt tests build too.
export { makeDeb } from "../../packages/api/src/testing/test-deb";

export interface AptRepositoryServer {
  cp: ControlPlane;
  /** `<control plane>/apt`. */
  url: string;
  /** The downloaded /apt/mesh.gpg (binary keyring, for signed-by= and gpgv --keyring). */
  keyPath: string;
  /** `deb [signed-by=<keyPath>] <url> stable main`. */
  sourceLine: string;
  /** Where .debs are added later (the repository is rebuilt within seconds). */
  poolDir: string;
  dispose(): Promise<void>;
}

/**
 * Starts a control plane (PGlite by default, or a fresh Postgres database; either with a fresh data
 * directory) whose apt repository holds `debs`: hosts may enrol with it too.
 * Resolves once /apt/dists/stable/InRelease answers 200 and the key is downloaded.
 */
export async function startAptRepository(opts: {
  debs: string[];
  env?: Record<string, string>;
  dataDir?: string;
  engine?: Engine;
}): Promise<AptRepositoryServer> {
  const engine = opts.engine ?? "pglite";
  const made = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "mesh-apt-cp-"));
  const poolDir = path.join(dataDir, "apt", "pool");
  fs.mkdirSync(poolDir, { recursive: true });
  for (const deb of opts.debs) fs.copyFileSync(deb, path.join(poolDir, path.basename(deb)));
  // An empty artifacts directory: only the given .debs, never the checkout's infra/dist.
  const artifacts = path.join(dataDir, "no-artifacts");
  fs.mkdirSync(artifacts, { recursive: true });
  const cp = await ControlPlane.start({ engine, dataDir, env: { MESH_ARTIFACTS_DIR: artifacts, ...opts.env } });
  const url = `${cp.url}/apt`;
  await waitFor("the apt repository", async () => (await fetch(`${url}/dists/stable/InRelease`)).status === 200, 60_000, 250);
  const keyPath = path.join(dataDir, "downloaded-mesh.gpg");
  fs.writeFileSync(keyPath, Buffer.from(await (await fetch(`${url}/mesh.gpg`)).arrayBuffer()));
  fs.chmodSync(keyPath, 0o644);
  const dispose = async () => {
    await cp.dispose();
    // PGlite's data directory goes with the control plane; with Postgres, the one made here goes now.
    if (made) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { cp, url, keyPath, sourceLine: `deb [signed-by=${keyPath}] ${url} stable main`, poolDir, dispose };
}

export interface AptSandbox {
  dir: string;
  /** apt-get/apt-cache with every directory inside the sandbox; resolves with what it said (never blocks the event loop: the repository may be served from this process). */
  run(program: "apt-get" | "apt-cache", args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** APT_CONFIG: the sandbox's apt.conf, read before anything of this machine's /etc/apt (for other apt tools). */
  env: Record<string, string>;
  /** Where configuration snippets go (as /etc/apt/apt.conf.d on a machine). */
  confDir: string;
}

/**
 * An apt configuration of its own under `dir`: sources (just `sourceLine`), apt.conf.d, lists, cache, dpkg
 * status. Given as APT_CONFIG, which apt reads first, so this machine's /etc/apt is never read nor written.
 * `extra` adds or overrides settings; a list becomes an apt list (e.g. `"DPkg::Options": ["--root=…"]`,
 * with `"Dir::State::status"` pointed at that root's dpkg status, for installing into a dpkg sandbox).
 */
export function aptSandbox(dir: string, sourceLine: string, extra: Record<string, string | string[]> = {}): AptSandbox {
  for (const d of [
    "etc/apt/sources.list.d",
    "etc/apt/apt.conf.d",
    "etc/apt/preferences.d",
    "etc/apt/trusted.gpg.d",
    "var/lib/apt/lists/partial",
    "var/cache/apt/archives/partial",
    "var/lib/dpkg",
  ]) {
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  }
  fs.writeFileSync(path.join(dir, "var/lib/dpkg/status"), "");
  fs.writeFileSync(path.join(dir, "etc/apt/sources.list"), `${sourceLine}\n`);
  const settings: Record<string, string | string[]> = {
    Dir: dir,
    "Dir::Etc": path.join(dir, "etc/apt"),
    "Dir::Etc::Main": path.join(dir, "etc/apt/apt.conf"),
    "Dir::Etc::Parts": path.join(dir, "etc/apt/apt.conf.d"),
    "Dir::Etc::SourceList": path.join(dir, "etc/apt/sources.list"),
    "Dir::Etc::SourceParts": path.join(dir, "etc/apt/sources.list.d"),
    "Dir::Etc::Preferences": path.join(dir, "etc/apt/preferences"),
    "Dir::Etc::PreferencesParts": path.join(dir, "etc/apt/preferences.d"),
    "Dir::Etc::Trusted": path.join(dir, "etc/apt/trusted.gpg"),
    "Dir::Etc::TrustedParts": path.join(dir, "etc/apt/trusted.gpg.d"),
    "Dir::State": path.join(dir, "var/lib/apt"),
    "Dir::State::status": path.join(dir, "var/lib/dpkg/status"),
    "Dir::Cache": path.join(dir, "var/cache/apt"),
    "Dir::Log": path.join(dir, "var/log/apt"),
    "APT::Get::List-Cleanup": "0",
    // The download methods run as root here: the sandbox is under a 0700 temporary directory _apt cannot enter.
    "APT::Sandbox::User": "root",
    ...extra,
  };
  const conf = path.join(dir, "apt.conf");
  const value = (v: string | string[]) => (Array.isArray(v) ? `{ ${v.map((x) => `${JSON.stringify(x)};`).join(" ")} }` : JSON.stringify(v));
  fs.writeFileSync(
    conf,
    Object.entries(settings)
      .map(([k, v]) => `${k} ${value(v)};\n`)
      .join(""),
  );
  const env = { APT_CONFIG: conf };
  return {
    dir,
    env,
    confDir: path.join(dir, "etc/apt/apt.conf.d"),
    run(program, args) {
      return new Promise((resolve) => {
        execFile(
          program,
          args,
          { encoding: "utf8", timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env, LC_ALL: "C", DEBIAN_FRONTEND: "noninteractive" } },
          (err, stdout, stderr) => {
            const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : null) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      });
    },
  };
}
