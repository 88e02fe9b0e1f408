// Bundles the host into one self-contained CommonJS file, dist/mesh-host.js,
// the input of the single-executable build; the version comes from package.json.
import { build } from "esbuild";
import { chmod, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(await readFile(join(here, "..", "package.json"), "utf8"));
const outfile = join(here, "..", "dist", "mesh-host.js");

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
    __MESH_HOST_VERSION__: JSON.stringify(pkg.version),
  },
  legalComments: "none",
  logLevel: "warning",
});
await chmod(outfile, 0o755);
