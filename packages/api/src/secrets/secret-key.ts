// Where the secret key comes from: MESH_SECRET_KEY (base64 of 32 bytes), or a key
// file made once, 0600, in the data directory. Every instance on one database must hold the same key.
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { SecretKeyError } from "./secret-box";

export const SECRET_KEY_FILE = "secret.key";

export interface SecretKeySource {
  key: Buffer;
  /** "MESH_SECRET_KEY", or the key file's path. */
  from: string;
}

function decode(text: string, from: string): Buffer {
  const key = Buffer.from(text.trim(), "base64");
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text.trim()) || key.length !== 32) {
    throw new SecretKeyError(`${from} must be 32 random bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

export function loadSecretKey(opts: { envKey?: string; dataDir: string }): SecretKeySource {
  if (opts.envKey) return { key: decode(opts.envKey, "MESH_SECRET_KEY"), from: "MESH_SECRET_KEY" };
  const file = path.join(opts.dataDir, SECRET_KEY_FILE);
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  try {
    const fd = fs.openSync(file, "wx", 0o600);
    fs.writeSync(fd, `${randomBytes(32).toString("base64")}\n`);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const stat = fs.statSync(file);
  if (stat.uid !== process.getuid?.()) throw new SecretKeyError(`the key file ${file} belongs to another user; refusing to use it`);
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  return { key: decode(fs.readFileSync(file, "utf8"), `the key file ${file}`), from: file };
}
