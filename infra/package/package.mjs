// `npm run package`: the host as one single-executable binary, a tarball with an
// install script, and a .deb, in infra/dist/. MESH_HOST_VERSION overrides the version
// (tests build N and N+1); MESH_HOST_BUNDLE packages an existing bundle as is.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const out = path.resolve(process.env.MESH_PACKAGE_OUT ?? path.join(repo, "infra/dist"));
const agentPkg = JSON.parse(fs.readFileSync(path.join(repo, "apps/agent/package.json"), "utf8"));
const version = process.env.MESH_HOST_VERSION ?? agentPkg.version;
const debArch = execFileSync("dpkg", ["--print-architecture"], { encoding: "utf8" }).trim();
const unameArch = { amd64: "x86_64", arm64: "aarch64" }[debArch] ?? debArch;
const work = path.join(out, `.work-${version}`);

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...opts });
const unit = (bindir, libdir) =>
  fs.readFileSync(path.join(repo, "infra/systemd/mesh-host.service"), "utf8").replaceAll("@BINDIR@", bindir).replaceAll("@LIBDIR@", libdir);
const rollback = fs.readFileSync(path.join(here, "mesh-host-rollback.sh"));
const runLoop = fs.readFileSync(path.join(here, "mesh-host-run-loop.sh"));

fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });

// 1. The bundle (one CommonJS file), with this version built in.
const bundle = process.env.MESH_HOST_BUNDLE ?? path.join(work, "mesh-host.js");
if (!process.env.MESH_HOST_BUNDLE) {
  run(process.execPath, [path.join(repo, "apps/agent/scripts/build.mjs")], { env: { ...process.env, MESH_HOST_VERSION: version, MESH_HOST_OUTFILE: bundle } });
}

// 2. Node's single executable application: node itself, stripped, with the bundle injected.
const binary = path.join(work, "mesh-host");
fs.writeFileSync(
  path.join(work, "sea-config.json"),
  JSON.stringify({ main: bundle, output: path.join(work, "sea.blob"), disableExperimentalSEAWarning: true, useCodeCache: true }),
);
run(process.execPath, ["--experimental-sea-config", path.join(work, "sea-config.json")], { stdio: "ignore" });
fs.copyFileSync(process.execPath, binary);
fs.chmodSync(binary, 0o755);
run("strip", [binary]);
run(
  path.join(repo, "node_modules/.bin/postject"),
  [binary, "NODE_SEA_BLOB", path.join(work, "sea.blob"), "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"],
  { stdio: "ignore" },
);

// 3. The tarball: binary, unit, rollback script, run loop (no systemd), install.sh (sh + tar + coreutils only).
const tarName = `mesh-host-${version}-linux-${unameArch}`;
const tarDir = path.join(work, tarName);
fs.mkdirSync(tarDir);
fs.copyFileSync(binary, path.join(tarDir, "mesh-host"));
fs.chmodSync(path.join(tarDir, "mesh-host"), 0o755);
fs.writeFileSync(path.join(tarDir, "mesh-host.service"), unit("/usr/local/bin", "/usr/local/lib/mesh-host"));
fs.writeFileSync(path.join(tarDir, "mesh-host-rollback"), rollback);
fs.chmodSync(path.join(tarDir, "mesh-host-rollback"), 0o755);
fs.writeFileSync(path.join(tarDir, "mesh-host-run-loop"), runLoop);
fs.chmodSync(path.join(tarDir, "mesh-host-run-loop"), 0o755);
fs.copyFileSync(path.join(here, "install.sh"), path.join(tarDir, "install.sh"));
fs.chmodSync(path.join(tarDir, "install.sh"), 0o755);
fs.mkdirSync(out, { recursive: true });
const tarball = path.join(out, `${tarName}.tar.gz`);
run("tar", ["--owner=0", "--group=0", "--numeric-owner", "-czf", tarball, "-C", work, tarName]);

// 4. The .deb: /usr/bin/mesh-host, the unit, docs; the state directory is made by postinst.
const debRoot = path.join(work, "deb");
const put = (rel, data, mode) => {
  const p = path.join(debRoot, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
  fs.chmodSync(p, mode);
};
put("usr/bin/mesh-host", fs.readFileSync(binary), 0o755);
put("lib/systemd/system/mesh-host.service", unit("/usr/bin", "/usr/lib/mesh-host"), 0o644);
put("usr/lib/mesh-host/mesh-host-rollback", rollback, 0o755);
put("usr/lib/mesh-host/mesh-host-run-loop", runLoop, 0o755);
put(
  "usr/share/doc/mesh-host/copyright",
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: mesh-host\n\nFiles: *\nCopyright: 2026 The Mesh authors\nLicense: proprietary\n Copyright 2026 The Mesh authors. All rights reserved.\n",
  0o644,
);
put("usr/share/lintian/overrides/mesh-host", fs.readFileSync(path.join(here, "deb/lintian-overrides")), 0o644);
put("usr/share/man/man1/mesh-host.1.gz", zlib.gzipSync(fs.readFileSync(path.join(here, "deb/mesh-host.1")), { level: 9 }), 0o644);
put(
  "usr/share/doc/mesh-host/changelog.gz",
  zlib.gzipSync(
    `mesh-host (${version}) stable; urgency=medium\n\n  * Release ${version}.\n\n -- Mesh <packages@mesh.invalid>  ${new Date(0).toUTCString().replace("GMT", "+0000")}\n`,
    { level: 9 },
  ),
  0o644,
);
const installedKb = Math.ceil(fs.statSync(binary).size / 1024) + 8;
put(
  "DEBIAN/control",
  [
    "Package: mesh-host",
    `Version: ${version}`,
    `Architecture: ${debArch}`,
    "Maintainer: Mesh <packages@mesh.invalid>",
    `Installed-Size: ${installedKb}`,
    // Node's runtime libraries; every Debian system has them (the tarball needs none beyond these either).
    "Depends: libc6 (>= 2.28), libgcc-s1, libstdc++6",
    "Section: admin",
    "Priority: optional",
    "Homepage: https://mesh.invalid/",
    "Description: Mesh host agent for fleet configuration",
    " mesh-host enrols this machine with a Mesh control plane, reconciles it",
    " towards its declaration crash-safely, and reports what it owns and where",
    " the machine has drifted. One self-contained binary with a systemd unit.",
    "",
  ].join("\n"),
  0o644,
);
for (const script of ["postinst", "prerm", "postrm"]) put(`DEBIAN/${script}`, fs.readFileSync(path.join(here, "deb", script)), 0o755);
const deb = path.join(out, `mesh-host_${version}_${debArch}.deb`);
run("dpkg-deb", ["--root-owner-group", "-Zgzip", "-z6", "--build", debRoot, deb], { stdio: "ignore" });

fs.copyFileSync(binary, path.join(out, `mesh-host-${version}-linux-${unameArch}`));
fs.rmSync(work, { recursive: true, force: true });
const size = (p) => fs.statSync(p).size;
const gz = zlib.gzipSync(fs.readFileSync(path.join(out, `mesh-host-${version}-linux-${unameArch}`))).length;
console.log(
  JSON.stringify({
    version,
    binary: path.join(out, `mesh-host-${version}-linux-${unameArch}`),
    binaryBytes: size(path.join(out, `mesh-host-${version}-linux-${unameArch}`)),
    binaryGzipBytes: gz,
    tarball,
    tarballBytes: size(tarball),
    deb,
    debBytes: size(deb),
  }),
);
