// Host releases for self-upgrade tests: a bundle of a version built the way packaging builds it
// (optionally broken after its first line, as a bad release would be), uploaded through the files
// endpoint and signed with the test release key, as a `host` resource.
import { createHash, createPrivateKey, sign } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { hostReleaseMessage } from "@mesh/protocol";
import { ADMIN_API_KEY } from "./control-plane";
import { REPO } from "./paths";

/** A build that dies before any host code runs. */
export const CRASH_AT_START = `throw new Error("broken build: crashes at start");`;

/** The host bundle of `version`, written under `dir`, with `breakWith` inserted after its first line. */
export function buildHost(dir: string, version: string, breakWith?: string): Buffer {
  const out = path.join(dir, `mesh-host-${version}.js`);
  execFileSync(process.execPath, [path.join(REPO, "apps/agent/scripts/build.mjs")], {
    env: { ...process.env, MESH_TEST_BUILD: "1", MESH_HOST_VERSION: version, MESH_HOST_OUTFILE: out },
    stdio: "inherit",
  });
  let bytes = fs.readFileSync(out);
  if (breakWith) {
    const text = bytes.toString("utf8");
    const eol = text.indexOf("\n") + 1;
    bytes = Buffer.from(text.slice(0, eol) + breakWith + "\n" + text.slice(eol));
  }
  return bytes;
}

/** Uploads `bytes` to the control plane and returns the `host` resource declaring it as `version`. */
export async function hostRelease(url: string, version: string, bytes: Buffer) {
  const key = createPrivateKey(fs.readFileSync(path.join(REPO, "infra/release/TEST-ONLY-release-private-key.pem")));
  const res = await fetch(`${url}/api/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(bytes),
  });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
  const { sha256, url: source } = (await res.json()) as { sha256: string; url: string };
  if (sha256 !== createHash("sha256").update(bytes).digest("hex")) throw new Error("the upload's sha256 is not the bundle's");
  return {
    type: "host",
    id: "mesh-host",
    version,
    sha256,
    source: { url: source, sha256 },
    signature: sign(null, Buffer.from(hostReleaseMessage(version, sha256)), key).toString("base64"),
  };
}
