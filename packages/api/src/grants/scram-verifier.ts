// A SCRAM-SHA-256 verifier for a Postgres role password (RFC 5802/7677, Postgres's stored format),
// so the control plane sends CREATE/ALTER ROLE the verifier and the clear password never reaches the grant database's logs.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";

export const SCRAM_ITERATIONS = 4096;

/** `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, base64, as Postgres stores it in pg_authid. */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = SCRAM_ITERATIONS): string {
  // Postgres SASLprep-normalises the password; the passwords minted here are base64url (ASCII), which SASLprep leaves alone.
  if (!/^[\x21-\x7e]+$/.test(password)) throw new Error("a SCRAM verifier is made here only for printable ASCII passwords");
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}
