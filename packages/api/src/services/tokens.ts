// Enrolment tokens, as the control plane issues and manages them: token.create (a token and the exact
// commands to enrol with it), token.list (what was issued and what became of it), token.revoke (taking
// back one not used up), and the first node's bootstrap token, traded once for the one-time secret that
// node's bundle wrote on this machine (the bundle's resources become the `mesh-control-plane` role, so
// node one keeps declaring the control plane it raised). Checking and consuming a token at enrolment is
// enrolment-token-use.ts; its format and hash, enrolment-token.ts.
import { createHash, timingSafeEqual } from "node:crypto";
import { promises as fs } from "node:fs";
import { z } from "zod";
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { bootstrapSecretsUsed, enrolmentTokens, nodes } from "@mesh/db";
import { curlPin, Labels, RoleResources } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { shellCommand, shellQuote } from "../shell-quote";
import { generateToken, hashSecret } from "./enrolment-token";
import { recordEvent } from "./record-event";
import { upsertRole } from "./roles";

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

export const ListTokensInput = z
  .strictObject({ limit: z.number().int().min(1).max(500).default(50), offset: z.number().int().min(0).default(0) })
  .default({ limit: 50, offset: 0 });

export type TokenStatus = "unused" | "used" | "expired" | "revoked";

/** At most this many of the nodes that enrolled with a token are listed with it. */
export const NODES_PER_TOKEN = 20;

/**
 * One page of tokens, each with the first nodes that enrolled with it, in one statement (the nodes
 * gathered per row by a correlated subquery), and the total in another: two queries whatever the page size.
 */
export async function listTokens(deps: Deps, raw: z.input<typeof ListTokensInput>) {
  const input = ListTokensInput.parse(raw);
  const enrolled = deps.db
    .select({ id: nodes.id, name: nodes.name })
    .from(nodes)
    .where(eq(nodes.tokenId, enrolmentTokens.id))
    .orderBy(nodes.createdAt, nodes.id)
    .limit(NODES_PER_TOKEN)
    .as("enrolled");
  const [rows, [total]] = await Promise.all([
    deps.db
      .select({
        token: enrolmentTokens,
        nodes: sql<
          { id: string; name: string }[]
        >`(select coalesce(json_agg(json_build_object('id', ${enrolled.id}, 'name', ${enrolled.name})), '[]'::json) from ${enrolled})`,
      })
      .from(enrolmentTokens)
      .orderBy(desc(enrolmentTokens.createdAt), enrolmentTokens.id)
      .limit(input.limit)
      .offset(input.offset),
    deps.db.select({ n: count() }).from(enrolmentTokens),
  ]);
  const now = nowOf(deps);
  const items = rows.map(({ token: t, nodes: enrolledNodes }) => {
    const status: TokenStatus = t.revokedAt ? "revoked" : t.uses >= t.maxUses ? "used" : t.expiresAt <= now ? "expired" : "unused";
    return {
      id: t.id,
      labels: t.labels,
      maxUses: t.maxUses,
      uses: t.uses,
      expiresAt: t.expiresAt,
      createdAt: t.createdAt,
      createdBy: t.createdBy,
      revokedAt: t.revokedAt,
      status,
      nodes: enrolledNodes,
    };
  });
  return { items, total: total?.n ?? 0 };
}

export async function revokeToken(deps: Deps, opts: { actor: string; id: string }) {
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(enrolmentTokens)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(enrolmentTokens.id, opts.id), isNull(enrolmentTokens.revokedAt)))
      .returning({ id: enrolmentTokens.id, uses: enrolmentTokens.uses, maxUses: enrolmentTokens.maxUses });
    if (rows.length === 0) throw new MeshError("NOT_FOUND", `no unrevoked token ${opts.id}`);
    await recordEvent(tx, { actor: opts.actor, action: "token.revoke", target: `token:${opts.id}` });
    return { id: opts.id, revoked: true };
  });
}

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
