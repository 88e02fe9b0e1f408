// The first node's token: traded once for the one-time secret that node's bundle
// wrote on this machine. The bundle's resources become the `mesh-control-plane`
// role, so node one keeps declaring the control plane it raised.
import { createHash, timingSafeEqual } from "node:crypto";
import { promises as fs } from "node:fs";
import { z } from "zod";
import { bootstrapSecretsUsed, enrolmentTokens } from "@mesh/db";
import { Labels, RoleResources } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { enrolCommand } from "./create-token";
import { generateToken, hashSecret } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { upsertRole } from "./roles";

export const BootstrapTokenRequest = z.strictObject({
  secret: z.string().regex(/^[0-9a-f]{64}$/, "64 hex digits"),
  labels: Labels.default({}),
  resources: RoleResources.default([]),
});
export type BootstrapTokenRequest = z.infer<typeof BootstrapTokenRequest>;

export const BOOTSTRAP_ROLE = "mesh-control-plane";
const DEFAULT_LABELS = { "mesh/role": "control-plane" };
const TTL_MS = 10 * 60_000;

const sha256 = (s: string) => createHash("sha256").update(s).digest();

async function secretMatches(secretFile: string, presented: string): Promise<boolean> {
  let stored: string;
  try {
    stored = (await fs.readFile(secretFile, "utf8")).trim();
  } catch {
    return false;
  }
  // Compared as hashes: equal length whatever was presented.
  return timingSafeEqual(sha256(stored), sha256(presented));
}

export async function issueBootstrapToken(deps: Deps, opts: { secretFile: string; publicUrl: string; tlsPin?: string; request: BootstrapTokenRequest }) {
  const { request } = opts;
  if (!(await secretMatches(opts.secretFile, request.secret)))
    throw new MeshError("UNAUTHORIZED", "the bootstrap secret does not match the one on this machine");
  const labels = Object.keys(request.labels).length ? request.labels : DEFAULT_LABELS;
  const { id, secret, token } = generateToken();
  const expiresAt = new Date(nowOf(deps).getTime() + TTL_MS);
  await deps.db.transaction(async (tx) => {
    // Accepted once, ever: a restart or a second instance sees the row.
    const used = await tx
      .insert(bootstrapSecretsUsed)
      .values({ secretHash: sha256(request.secret).toString("hex") })
      .onConflictDoNothing()
      .returning({ at: bootstrapSecretsUsed.usedAt });
    if (used.length === 0) throw new MeshError("UNAUTHORIZED", "this bootstrap secret was already used");
    await tx.insert(enrolmentTokens).values({ id, secretHash: hashSecret(secret), labels, maxUses: 1, expiresAt, createdBy: "bootstrap" });
    await recordEvent(tx, { actor: "bootstrap", action: "bootstrap.token", target: `token:${id}`, data: { labels, resources: request.resources.length } });
  });
  if (request.resources.length > 0) {
    await upsertRole(deps, { actor: "bootstrap", input: { name: BOOTSTRAP_ROLE, selector: { labels }, resources: request.resources } });
  }
  return { token, expiresAt: expiresAt.toISOString(), command: enrolCommand(opts.publicUrl, token, opts.tlsPin) };
}
