// A real (tiny) .deb with one file, built with dpkg-deb: for apt repository tests that need no
// mesh-host build (these and the end-to-end ones in test/).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Builds `<dir>/<name>_<version>_<arch>.deb` (dir made if missing) and returns its path. */
export function makeDeb(dir: string, name: string, version: string, arch: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-debroot-"));
  try {
    fs.mkdirSync(path.join(root, "DEBIAN"));
    fs.mkdirSync(path.join(root, "usr/share/doc", name), { recursive: true });
    fs.writeFileSync(path.join(root, "usr/share/doc", name, "note"), `${name} ${version}\n`);
    fs.writeFileSync(
      path.join(root, "DEBIAN/control"),
      `Package: ${name}\nVersion: ${version}\nArchitecture: ${arch}\nMaintainer: Mesh <packages@mesh.invalid>\nDescription: test package\n for the apt repository tests\n`,
    );
    fs.mkdirSync(dir, { recursive: true });
    const deb = path.join(dir, `${name}_${version}_${arch}.deb`);
    execFileSync("dpkg-deb", ["--root-owner-group", "--build", root, deb], { stdio: "ignore" });
    return deb;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
