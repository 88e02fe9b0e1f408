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
// The release key's public half, built in: a real release sets MESH_RELEASE_PUBLIC_KEY (PEM);
// otherwise the committed test key, whose private half is public too (docs/decisions/0007).
// A release build (MESH_RELEASE_BUILD=1) refuses to fall back to the test key.
if (process.env.MESH_RELEASE_BUILD === "1" && !process.env.MESH_RELEASE_PUBLIC_KEY) throw new Error("MESH_RELEASE_BUILD=1 needs MESH_RELEASE_PUBLIC_KEY (the release key's public half, PEM)");
const releasePublicKey = process.env.MESH_RELEASE_PUBLIC_KEY ?? (await readFile(join(here, "..", "..", "..", "infra", "release", "test-release-public-key.pem"), "utf8"));
if (!/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n?$/.test(releasePublicKey.trim() + "\n")) {
  throw new Error("MESH_RELEASE_PUBLIC_KEY: not a PEM public key");
}

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
    __MESH_RELEASE_PUBLIC_KEY__: JSON.stringify(releasePublicKey.trim() + "\n"),
  },
  legalComments: "none",
  // Smaller source is faster to parse on every start (see docs on host RSS and start time).
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [englishOnly],
  logLevel: "warning",
});
await chmod(outfile, 0o755);
