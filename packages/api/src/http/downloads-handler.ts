// /download: the host's artifacts of this control plane's version (built by
// `npm run package`), and install.sh, which fetches the tarball for the machine's
// architecture, checks its sha256 and runs the tarball's own install script.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { shellQuote } from "../shell-quote";
import { fileResponse, headOf } from "./file-body";
import { jsonError } from "./json-body";

export interface DownloadOptions {
  artifactsDir: string;
  hostVersion: string;
  publicUrl: string;
}

const ARTIFACT = /^mesh-host[-_][A-Za-z0-9._+~-]{1,120}$/;
const ARCHES = ["x86_64", "aarch64"] as const;

function tarballName(version: string, arch: string) {
  return `mesh-host-${version}-linux-${arch}.tar.gz`;
}

export interface ArtifactStatus {
  hostVersion: string;
  /** Architectures with a tarball of this version: install.sh serves these. */
  arches: string[];
  /** .deb files of this version, by name. */
  debs: string[];
}

/** What `npm run package` has left for this control plane's version (the Add machines page says so). */
export function artifactStatus(opts: Pick<DownloadOptions, "artifactsDir" | "hostVersion">): ArtifactStatus {
  const arches = ARCHES.filter((arch) => fs.existsSync(path.join(opts.artifactsDir, tarballName(opts.hostVersion, arch))));
  let debs: string[] = [];
  try {
    debs = fs.readdirSync(opts.artifactsDir).filter((f) => f.startsWith(`mesh-host_${opts.hostVersion}_`) && f.endsWith(".deb"));
  } catch {
    // no artifacts directory yet
  }
  return { hostVersion: opts.hostVersion, arches: [...arches], debs };
}

// Hashed once per file version, not on every unauthenticated install.sh request (a tarball is ~32 MB).
const sums = new Map<string, { key: string; sha256: string }>();

function sha256Of(file: string): string | null {
  try {
    const stat = fs.statSync(file);
    const key = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
    const known = sums.get(file);
    if (known?.key === key) return known.sha256;
    const sha256 = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    sums.set(file, { key, sha256 });
    return sha256;
  } catch {
    return null;
  }
}

/** A comment line cannot be ended early: anything but printable ASCII is dropped. */
const commentSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, "?");

/**
 * What `curl -fsSL …/install.sh | sh` runs when this control plane has no tarball: a 404 there would
 * leave sh an empty script and the pipeline exiting 0 after curl's bare "(22) 404"; this says why and fails.
 */
export function missingArtifactsScript(hostVersion: string): string {
  return `#!/bin/sh
echo ${shellQuote(`mesh-host: this control plane has no mesh-host ${hostVersion} tarball to install: run \`npm run package\` on the control plane, then run this command again`)} >&2
exit 1
`;
}

/** The install script: sh, coreutils, tar, and curl or wget to fetch. Every value is shell-quoted. */
export function installScript(opts: DownloadOptions): string {
  const sums = ARCHES.map((arch) => [arch, sha256Of(path.join(opts.artifactsDir, tarballName(opts.hostVersion, arch)))] as const).filter(([, s]) => s);
  const cases = sums.map(([arch, sum]) => `  ${arch}) sum=${shellQuote(sum!)} ;;`).join("\n");
  return `#!/bin/sh
# Installs mesh-host ${commentSafe(opts.hostVersion)} from ${commentSafe(opts.publicUrl)}: fetches the tarball for
# this machine, checks its sha256, and runs its install.sh (sh, tar, coreutils).
set -eu
version=${shellQuote(opts.hostVersion)}
public_url=${shellQuote(opts.publicUrl)}
arch=$(uname -m)
case "$arch" in
${cases || "  none) ;;"}
  *) echo "mesh-host: no build for $arch on this control plane" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
url="$public_url/download/mesh-host-$version-linux-$arch.tar.gz"
fail() { echo "mesh-host: $*" >&2; exit 1; }
if command -v curl >/dev/null 2>&1; then curl -fsSL \${MESH_CURL_OPTS:-} "$url" -o "$tmp/host.tar.gz" || fail "could not download $url (curl exit $?): the control plane may not have built it; run 'npm run package' there, then run this command again"
elif command -v wget >/dev/null 2>&1; then wget -q \${MESH_WGET_OPTS:-} -O "$tmp/host.tar.gz" "$url" || fail "could not download $url (wget exit $?): the control plane may not have built it; run 'npm run package' there, then run this command again"
else fail "needs curl or wget to download"; fi
[ -s "$tmp/host.tar.gz" ] || fail "the download of $url is empty"
echo "$sum  $tmp/host.tar.gz" | sha256sum -c --quiet - >/dev/null 2>&1 || fail "the download of $url does not match its sha256 $sum (changed on the control plane since this script was fetched, or corrupted on the way); run this command again"
tar -xzf "$tmp/host.tar.gz" -C "$tmp" || fail "cannot unpack $url"
sh "$tmp/mesh-host-$version-linux-$arch/install.sh" "$@"
`;
}

/** `method` GET or HEAD: HEAD answers the headers (content-length, type) and reads nothing. */
export async function handleDownload(deps: Pick<Deps, "log">, name: string, opts: DownloadOptions, method = "GET"): Promise<Response> {
  const res = await download(deps, name, opts, method);
  return method === "HEAD" && res.body ? headOf(res) : res;
}

async function download(deps: Pick<Deps, "log">, name: string, opts: DownloadOptions, method: string): Promise<Response> {
  try {
    if (name === "install.sh") {
      if (artifactStatus(opts).arches.length === 0) {
        // 200 with a script that fails loudly: the command is piped into sh, which runs whatever it is given.
        return new Response(missingArtifactsScript(opts.hostVersion), {
          headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store", "x-mesh-artifacts": "missing" },
        });
      }
      return new Response(installScript(opts), { headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store" } });
    }
    if (!ARTIFACT.test(name)) throw new MeshError("NOT_FOUND", `no artifact named ${name.slice(0, 80)}`);
    const file = path.join(opts.artifactsDir, name);
    // Opened once, and streamed from that descriptor: an artifact replaced meanwhile (`npm run package`
    // again) never mixes into a download under way, nor disagrees with its content-length.
    const handle = await fs.promises.open(file, "r").catch(() => null);
    const stat = handle ? await handle.stat().catch(() => null) : null;
    if (!handle || !stat?.isFile()) {
      await handle?.close().catch(() => {});
      throw new MeshError("NOT_FOUND", `no artifact named ${name}: run \`npm run package\` on the control plane`);
    }
    // Streamed: anyone may download, so no request holds a whole artifact in memory. fileResponse
    // closes the descriptor however the request ends (read through, cancelled, HEAD).
    return await fileResponse(method, handle, stat.size, { "content-type": "application/octet-stream", "cache-control": "public, max-age=300" });
  } catch (err) {
    return jsonError(deps, err);
  }
}
