// The state a resource declares, in the host's shape, and its digest: what the host reports in
// `owned` for a resource it holds as declared (apps/agent/src/resources/*: each provider's
// `declared`, digested by resources/observed.ts digestOf). The plan compares a proposed resource's
// digest with the one the host reported to tell "already there" from "will change". A mirror, not
// a shared module: the host's providers are the authority; test/e2e/declared-state-parity.test.ts
// checks the two agree for every type.
import { createHash } from "node:crypto";
import { canonicalJson, normalDebianVersion, type Resource } from "@mesh/protocol";

export type DeclaredValue = string | number | boolean | null;
export type DeclaredState = { type: string } & Record<string, DeclaredValue>;

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const normaliseMode = (mode: string) => (parseInt(mode, 8) & 0o7777).toString(8).padStart(4, "0");
const normaliseVersion = (v: string | null) => (v === null ? null : normalDebianVersion(v));

export function declaredState(r: Resource): DeclaredState {
  switch (r.type) {
    case "file":
      return {
        type: "file",
        path: r.path,
        mode: normaliseMode(r.mode),
        sha256: r.source ? r.source.sha256 : sha256(Buffer.from(r.content ?? "", r.encoding === "base64" ? "base64" : "utf8")),
        ...(r.owner ? { owner: r.owner } : {}),
        ...(r.group ? { group: r.group } : {}),
      };
    case "directory":
      return {
        type: "directory",
        path: r.path,
        mode: normaliseMode(r.mode),
        ...(r.owner ? { owner: r.owner } : {}),
        ...(r.group ? { group: r.group } : {}),
        ...(r.purge ? { unmanaged: 0 } : {}),
      };
    case "symlink":
      return { type: "symlink", path: r.path, target: r.target };
    case "package": {
      const installed = r.state === "installed";
      const version = installed ? normaliseVersion(r.version ?? null) : null;
      return { type: "package", name: r.name, installed, ...(installed && version === null ? {} : { version }) };
    }
    case "service": {
      const state: DeclaredState = { type: "service", unit: r.unit };
      if (r.content !== undefined) state.unitFileSha256 = sha256(r.content);
      if (r.enabled !== undefined) state.enabled = r.enabled;
      if (r.state !== undefined) state.running = r.state === "running";
      return state;
    }
    case "host":
      return { type: "host", version: r.version };
  }
}

export function stateDigest(state: DeclaredState): string {
  return sha256(canonicalJson(state));
}
