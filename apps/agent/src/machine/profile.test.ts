// The profile says how the host was installed, from dpkg's own record of the running binary,
// so a role can pick the upgrade path per node (decision 0007).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Profile } from "@mesh/protocol";
import { collectProfile, hostInstall } from "./profile";

let base: string;
let root: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "mesh-profile-"));
  root = join(base, "root");
  for (const d of ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"]) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, "var/lib/dpkg/status"), "");
  // A package named mesh-host that ships /usr/bin/mesh-host, installed into the sandbox by the real dpkg.
  const pkg = join(base, "pkg");
  mkdirSync(join(pkg, "DEBIAN"), { recursive: true });
  mkdirSync(join(pkg, "usr/bin"), { recursive: true });
  writeFileSync(
    join(pkg, "DEBIAN/control"),
    "Package: mesh-host\nVersion: 1.0.0\nArchitecture: all\nMaintainer: Mesh tests <tests@mesh.invalid>\nDescription: stands for the host package\n",
  );
  writeFileSync(join(pkg, "usr/bin/mesh-host"), "#!/bin/sh\n", { mode: 0o755 });
  const deb = join(base, "mesh-host.deb");
  expect(spawnSync("dpkg-deb", ["--root-owner-group", "--build", pkg, deb]).status).toBe(0);
  const installed = spawnSync("dpkg", [`--root=${root}`, `--log=${join(root, "var/log/dpkg.log")}`, "-i", deb], { encoding: "utf8" });
  expect(installed.status, installed.stderr).toBe(0);
  mkdirSync(join(root, "usr/local/bin"), { recursive: true });
  writeFileSync(join(root, "usr/local/bin/mesh-host"), "#!/bin/sh\n", { mode: 0o755 });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("hostInstall", () => {
  it("is deb when dpkg records the running binary as the mesh-host package's", async () => {
    expect(await hostInstall(root, join(root, "usr/bin/mesh-host"), true)).toBe("deb");
  });

  it("is tarball for the single executable that no package owns", async () => {
    expect(await hostInstall(root, join(root, "usr/local/bin/mesh-host"), true)).toBe("tarball");
    expect(await hostInstall(root, join(base, "elsewhere/mesh-host"), true)).toBe("tarball");
  });

  it("is script for the bundle run with node", async () => {
    expect(await hostInstall(root, join(root, "usr/bin/mesh-host"), false)).toBe("script");
  });

  it("is in the profile, which the protocol accepts (and accepts without it, from older hosts)", async () => {
    const profile = await collectProfile("m", root);
    expect(profile.hostInstall).toBe("script");
    expect(Profile.parse(profile)).toEqual(profile);
    const { hostInstall: _, ...older } = profile;
    expect(Profile.safeParse(older).success).toBe(true);
    expect(Profile.safeParse({ ...profile, hostInstall: "rpm" }).success).toBe(false);
  });
});
