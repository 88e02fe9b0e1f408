// Secrets at rest: AES-256-GCM under the control plane's secret key. A sealed value
// names its format, so a value written by an older version (clear text) is never taken for one.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

const PREFIX = "mesh-sealed-v1.";

export interface SecretBox {
  /** A short, public name of the key (an HMAC of a fixed string): instances compare it, never the key. */
  readonly keyId: string;
  /** `context` is bound to the ciphertext (e.g. the grant's principal), so a sealed value cannot be moved to another row. */
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
}

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretKeyError";
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretKeyError(`the secret key must be 32 bytes, not ${key.length}`);
  const keyId = createHmac("sha256", key).update("mesh secret key id").digest("hex").slice(0, 16);
  return {
    keyId,
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${PREFIX}${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${body.toString("base64url")}`;
    },
    open(sealed, context) {
      if (!isSealed(sealed)) throw new SecretKeyError("not a sealed secret");
      const [iv, tag, body] = sealed.slice(PREFIX.length).split(".");
      if (iv === undefined || tag === undefined || body === undefined) throw new SecretKeyError("a sealed secret is malformed");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretKeyError(`a sealed secret does not open with key ${keyId} (another key, or altered)`);
      }
    },
  };
}
