#!/usr/bin/env node
// Signs a host release for a `host` resource: prints {version, sha256, signature} for
// the file given. usage: MESH_RELEASE_PRIVATE_KEY_FILE=key.pem node sign-release.mjs VERSION FILE
import { createHash, createPrivateKey, sign } from "node:crypto";
import fs from "node:fs";

const [version, file] = process.argv.slice(2);
const keyFile = process.env.MESH_RELEASE_PRIVATE_KEY_FILE;
if (!version || !file || !keyFile) {
  process.stderr.write("usage: MESH_RELEASE_PRIVATE_KEY_FILE=key.pem node sign-release.mjs VERSION FILE\n");
  process.exit(2);
}
const sha256 = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
// Must stay equal to hostReleaseMessage() in packages/protocol/src/resources.ts.
const message = `mesh-host release v1\n${version}\n${sha256}\n`;
const signature = sign(null, Buffer.from(message), createPrivateKey(fs.readFileSync(keyFile))).toString("base64");
process.stdout.write(JSON.stringify({ version, sha256, signature }) + "\n");
