// The apt repository's signing key: made once with gpg into GNUPGHOME inside the data directory
// (0700), or the operator's armored secret key (MESH_APT_SIGNING_KEY_FILE) imported there.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { runTool } from "./apt-tools";

export interface AptSigningKey {
  gnupgHome: string;
  /** The signing key's fingerprint (40 hex digits), what gpg signs with (--local-user). */
  fingerprint: string;
  /** The public key as a binary OpenPGP keyring: what `signed-by=` and `gpgv --keyring` take. */
  publicKeyring: Buffer;
}

export class AptSigningKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AptSigningKeyError";
  }
}

const USER_ID = "Mesh apt repository <apt@mesh.invalid>";

export function gpg(gnupgHome: string, args: string[], opts: { stdoutFile?: string } = {}): Promise<string> {
  return runTool(["gpg", "--batch", "--no-tty", "--quiet", ...args], { env: { GNUPGHOME: gnupgHome, LC_ALL: "C" }, timeoutMs: 30_000, ...opts });
}

/** gpg starts an agent for secret-key work that outlives it; the control plane leaves no daemon behind. */
export async function stopGpgAgent(gnupgHome: string): Promise<void> {
  await runTool(["gpgconf", "--kill", "gpg-agent"], { env: { GNUPGHOME: gnupgHome }, timeoutMs: 10_000 }).catch(() => {});
}

/** The fingerprints of secret keys in gpg's colon listing (a `sec` record, then its `fpr`). */
export function secretFingerprints(colons: string): string[] {
  const out: string[] = [];
  let inSecret = false;
  for (const line of colons.split("\n")) {
    const fields = line.split(":");
    if (fields[0] === "sec") inSecret = true;
    else if (fields[0] === "pub" || fields[0] === "ssb" || fields[0] === "sub") inSecret = false;
    else if (fields[0] === "fpr" && inSecret) {
      if (/^[0-9A-F]{40}$/.test(fields[9] ?? "")) out.push(fields[9]!);
      inSecret = false;
    }
  }
  return out;
}

/** The secret key's fingerprint in the operator's file, read in a scratch home (nothing imported yet). */
async function fingerprintOfKeyFile(scratchParent: string, keyFile: string): Promise<string> {
  const scratch = fs.mkdtempSync(path.join(scratchParent, ".gnupg-check-"));
  let listing: string;
  try {
    listing = await gpg(scratch, ["--with-colons", "--import-options", "show-only", "--import", keyFile]);
  } catch (err) {
    throw new AptSigningKeyError(`MESH_APT_SIGNING_KEY_FILE (${keyFile}) cannot be read as an OpenPGP key: ${(err as Error).message}`);
  } finally {
    await stopGpgAgent(scratch);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const [fpr] = secretFingerprints(listing);
  if (!fpr)
    throw new AptSigningKeyError(`MESH_APT_SIGNING_KEY_FILE (${keyFile}) holds no secret key: export it with \`gpg --armor --export-secret-keys KEYID\``);
  return fpr;
}

/** A home made whole in a temporary directory and renamed into place, so two instances never make two keys. */
async function makeHome(gnupgHome: string, keyFile?: string): Promise<void> {
  const tmp = `${gnupgHome}.tmp-${randomBytes(6).toString("hex")}`;
  fs.mkdirSync(tmp, { mode: 0o700 });
  try {
    if (keyFile) await gpg(tmp, ["--import", keyFile]);
    else await gpg(tmp, ["--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", USER_ID, "ed25519", "sign", "never"]);
    await stopGpgAgent(tmp);
    try {
      fs.renameSync(tmp, gnupgHome);
    } catch (err) {
      // Another instance made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY" && (err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  } finally {
    await stopGpgAgent(tmp);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Opens (making it the first time) the repository's signing key under `gnupgHome`. */
export async function openAptSigningKey(opts: { gnupgHome: string; keyFile?: string }): Promise<AptSigningKey> {
  const { gnupgHome, keyFile } = opts;
  fs.mkdirSync(path.dirname(gnupgHome), { recursive: true, mode: 0o700 });
  // The operator's file is checked before anything is imported from it.
  const given = keyFile ? await fingerprintOfKeyFile(path.dirname(gnupgHome), keyFile) : null;
  if (!fs.existsSync(gnupgHome)) await makeHome(gnupgHome, keyFile);
  else if (keyFile)
    await gpg(gnupgHome, ["--import", keyFile]).catch((err) => {
      throw new AptSigningKeyError(`MESH_APT_SIGNING_KEY_FILE (${keyFile}) could not be imported: ${(err as Error).message}`);
    });
  fs.chmodSync(gnupgHome, 0o700);
  let fingerprint: string;
  if (given) fingerprint = given;
  else {
    const [fpr] = secretFingerprints(await gpg(gnupgHome, ["--with-colons", "--list-secret-keys"]));
    if (!fpr) throw new AptSigningKeyError(`${gnupgHome} holds no secret key: remove the directory to make a new one (hosts then need the new /apt/mesh.gpg)`);
    fingerprint = fpr;
  }
  const publicKeyring = await exportPublicKey(gnupgHome, fingerprint);
  return { gnupgHome, fingerprint, publicKeyring };
}

/** The binary public key, written by gpg to a file (binary does not survive a string). */
async function exportPublicKey(gnupgHome: string, fingerprint: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(path.dirname(gnupgHome), ".keyring-"));
  try {
    await gpg(gnupgHome, ["--yes", "--output", path.join(dir, "mesh.gpg"), "--export", fingerprint]);
    return fs.readFileSync(path.join(dir, "mesh.gpg"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
