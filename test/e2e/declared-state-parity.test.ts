// The plan's mirror of the host's declared states (packages/api/src/services/declared-state.ts)
// must digest every resource exactly as mesh-host does (each provider's `declared`, resources/observed.ts):
// a host holding a resource as proposed is then told from one that will change. Pure: no processes.
import { describe, expect, it } from "vitest";
import { Resource } from "@mesh/protocol";
import { providerFor } from "@mesh/agent/src/resources/providers";
import { digestOf } from "@mesh/agent/src/resources/observed";
import { declaredState, stateDigest } from "../../packages/api/src/services/declared-state";

const resources = [
  { type: "file", id: "a", path: "/srv/a", content: "hello\n" },
  { type: "file", id: "b", path: "/srv/b", content: "aGk=", encoding: "base64", mode: "600", owner: "www-data", group: "adm" },
  { type: "file", id: "c", path: "/srv/c", source: { url: "/api/files/x", sha256: "a".repeat(64) } },
  { type: "directory", id: "d", path: "/srv/d" },
  { type: "directory", id: "e", path: "/srv/e", mode: "0700", owner: "root", purge: true },
  { type: "symlink", id: "f", path: "/srv/f", target: "/srv/a" },
  { type: "package", id: "g", name: "nginx" },
  { type: "package", id: "h", name: "nginx", version: "0:1.2-3" },
  { type: "package", id: "i", name: "telnet", state: "absent" },
  { type: "service", id: "j", unit: "web.service", content: "[Service]\nExecStart=/bin/true\n", enabled: true, state: "running" },
  { type: "service", id: "k", unit: "other.service", state: "stopped" },
].map((r) => Resource.parse(r));

describe("the plan's declared states", () => {
  it.each(resources.map((r) => [r.id, r] as const))("digest %s as mesh-host does", (_id, r) => {
    const host = providerFor(r.type).declared(r as never);
    expect(declaredState(r)).toEqual(host);
    expect(stateDigest(declaredState(r))).toBe(digestOf(host));
  });
});
