// token.create: issues an enrolment token and the exact command to enrol with it.
import { z } from "zod";
import { curlPin, Labels } from "@mesh/protocol";
import { enrolmentTokens } from "@mesh/db";
import { nowOf, type Deps } from "../deps";
import { generateToken, hashSecret } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { shellCommand, shellQuote } from "../shell-quote";

export const CreateTokenInput = z.strictObject({
  ttlSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .default(3600),
  labels: Labels.default({}),
  maxUses: z.number().int().min(1).max(10_000).default(1),
});
export type CreateTokenInput = z.input<typeof CreateTokenInput>;

export interface CreatedToken {
  id: string;
  token: string;
  expiresAt: string;
  command: string;
  /** Installs this control plane's mesh-host build (served at /download) on the new machine. */
  installCommand: string;
}

/** curl, pinned to the control plane's key over TLS (curl's own pin format is base64). Every value shell-quoted. */
export function installCommand(publicUrl: string, tlsPin?: string): string {
  const url = `${publicUrl}/download/install.sh`;
  if (!publicUrl.startsWith("https://") || !tlsPin) return `${shellCommand(["curl", "-fsSL", url])} | sh`;
  const pin = curlPin(tlsPin);
  return `${shellCommand(["curl", "-fsSL", "-k", "--pinnedpubkey", pin, url])} | MESH_CURL_OPTS=${shellQuote(`-k --pinnedpubkey ${pin}`)} sh`;
}

/**
 * The exact command for the new machine: pinned over TLS, explicitly insecure otherwise. Every value shell-quoted.
 * The token goes in on standard input (`--token -`) from printf, a shell builtin, so it never appears in
 * another process's argv (ps, /proc/PID/cmdline) on the new machine.
 */
export function enrolCommand(publicUrl: string, token: string, tlsPin?: string): string {
  const trust = publicUrl.startsWith("https://") && tlsPin ? ["--ca-pin", tlsPin] : ["--insecure"];
  return `${shellCommand(["printf", "%s\\n", token])} | ${shellCommand(["mesh-host", "enrol", publicUrl, "--token", "-", ...trust])}`;
}

export async function createToken(deps: Deps, opts: { actor: string; publicUrl: string; tlsPin?: string; input: CreateTokenInput }): Promise<CreatedToken> {
  const input = CreateTokenInput.parse(opts.input);
  const { id, secret, token } = generateToken();
  const expiresAt = new Date(nowOf(deps).getTime() + input.ttlSeconds * 1000);
  await deps.db.transaction(async (tx) => {
    await tx.insert(enrolmentTokens).values({
      id,
      secretHash: hashSecret(secret),
      labels: input.labels,
      maxUses: input.maxUses,
      expiresAt,
      createdBy: opts.actor,
    });
    await recordEvent(tx, {
      actor: opts.actor,
      action: "token.create",
      data: { tokenId: id, ttlSeconds: input.ttlSeconds, labels: input.labels, maxUses: input.maxUses },
    });
  });
  return {
    id,
    token,
    expiresAt: expiresAt.toISOString(),
    command: enrolCommand(opts.publicUrl, token, opts.tlsPin),
    installCommand: installCommand(opts.publicUrl, opts.tlsPin),
  };
}
