// Bundles the host into one self-contained CommonJS file, dist/mesh-host.js,
// the input of the single-executable build; the version comes from package.json.
import { build } from "esbuild";
import { chmod, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(await readFile(join(here, "..", "package.json"), "utf8"));
// Packaging builds other versions elsewhere (tests build N and N+1).
const outfile = process.env.MESH_HOST_OUTFILE ?? join(here, "..", "dist", "mesh-host.js");
const version = process.env.MESH_HOST_VERSION ?? pkg.version;
// The release key's public half, built in (decision 0007): MESH_RELEASE_PUBLIC_KEY (PEM) or
// MESH_RELEASE_PUBLIC_KEY_FILE. Fails closed: without one the host refuses every self-upgrade.
// Only a test build (MESH_TEST_BUILD=1, what the tests use) trusts the committed test key,
// and it says so at every start, in `mesh-host version` and in `mesh-host status`.
const testBuild = process.env.MESH_TEST_BUILD === "1";
const testKey = await readFile(join(here, "..", "..", "..", "infra", "release", "test-release-public-key.pem"), "utf8");
const keyFile = process.env.MESH_RELEASE_PUBLIC_KEY_FILE;
let releasePublicKey = process.env.MESH_RELEASE_PUBLIC_KEY || (keyFile ? await readFile(keyFile, "utf8") : null);
const pemBody = (pem) => pem.replace(/\s+/g, "");
const refuse = (why) => {
  process.stderr.write(`mesh-host build: refused: ${why}\n`);
  process.exit(1);
};
if (releasePublicKey !== null) {
  if (!/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n?$/.test(releasePublicKey.trim() + "\n")) {
    refuse(`${keyFile ? `MESH_RELEASE_PUBLIC_KEY_FILE=${keyFile}` : "MESH_RELEASE_PUBLIC_KEY"}: not a PEM public key`);
  }
  if (pemBody(releasePublicKey) === pemBody(testKey) && !testBuild) {
    refuse(
      "the release key given is the committed test key (infra/release/test-release-public-key.pem), whose private half is public; only a test build (MESH_TEST_BUILD=1) may trust it",
    );
  }
} else if (testBuild) {
  releasePublicKey = testKey;
} else if (process.env.MESH_RELEASE_BUILD === "1") {
  refuse("MESH_RELEASE_BUILD=1 needs MESH_RELEASE_PUBLIC_KEY_FILE (or MESH_RELEASE_PUBLIC_KEY): the release key's public half, PEM");
}
if (testBuild) process.stderr.write("mesh-host build: TEST BUILD (MESH_TEST_BUILD=1): trusts the committed test release key; never ship it\n");
else if (releasePublicKey === null)
  process.stderr.write("mesh-host build: no release key (MESH_RELEASE_PUBLIC_KEY_FILE unset): this host refuses every self-upgrade\n");

// zod's `z.locales` pulls in every translation (~360 KB the host never uses, parsed at
// every start); only English is kept, which is also the one zod configures by default.
const englishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /(^|\/)locales\/index\.c?js$/ }, (args) => {
      if (!args.importer.includes(`${"node_modules"}/zod/`)) return undefined;
      return { path: join(args.resolveDir, args.path), namespace: "zod-locales" };
    });
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path.replace(/index\.(c?js)$/, "en.$1"))};`,
      loader: "js",
      resolveDir: dirname(args.path),
    }));
  },
};

await build({
  entryPoints: [join(here, "..", "src", "main.ts")],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  banner: { js: "#!/usr/bin/env node" },
  // ws would otherwise try to require its optional native addons at runtime.
  define: {
    "process.env.WS_NO_BUFFER_UTIL": '"1"',
    "process.env.WS_NO_UTF_8_VALIDATE": '"1"',
    __MESH_HOST_VERSION__: JSON.stringify(version),
    __MESH_RELEASE_PUBLIC_KEY__: JSON.stringify(releasePublicKey === null ? "" : releasePublicKey.trim() + "\n"),
    __MESH_TEST_BUILD__: JSON.stringify(testBuild),
  },
  legalComments: "none",
  // Smaller source is faster to parse on every start (see docs on host RSS and start time).
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [englishOnly],
  logLevel: "warning",
});
await chmod(outfile, 0o755);
