// apiKey.list / create / rotate / revoke: named keys for automation, admin or viewer.
// A key is shown once (at creation, at rotation); only its sha256 is stored.
import { z } from "zod";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { apiKeys, USER_ROLES } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { generateApiKey, generateApiKeySecret } from "../auth/api-key-format";
import { hashApiKey } from "../auth/credentials";
import { recordEvent } from "./record-event";
import { CallerName } from "./caller-name";

export const CreateApiKeyInput = z.strictObject({
  name: CallerName,
  role: z.enum(USER_ROLES),
});
export type CreateApiKeyInput = z.input<typeof CreateApiKeyInput>;

export async function listApiKeys(deps: Pick<Deps, "db">) {
  const items = await deps.db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      role: apiKeys.role,
      createdBy: apiKeys.createdBy,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .orderBy(desc(apiKeys.createdAt))
    .limit(500);
  return { items };
}

export async function createApiKey(deps: Deps, opts: { actor: string; input: CreateApiKeyInput }) {
  const input = CreateApiKeyInput.parse(opts.input);
  const { id, key } = generateApiKey();
  await deps.db.transaction(async (tx) => {
    // The name is the key's actor in the audit trail: one key per name, ever.
    const inserted = await tx
      .insert(apiKeys)
      .values({ id, name: input.name, role: input.role, keyHash: hashApiKey(key), createdBy: opts.actor })
      .onConflictDoNothing()
      .returning({ id: apiKeys.id });
    if (inserted.length === 0)
      throw new MeshError("CONFLICT", `an API key named ${input.name} exists already (perhaps revoked); choose another name, or rotate that key`);
    await recordEvent(tx, { actor: opts.actor, action: "api-key.create", target: `api-key:${id}`, data: { name: input.name, role: input.role } });
  });
  return { id, name: input.name, role: input.role, key };
}

/** A new secret for the same key (same id, name and role); the old secret stops working at once. */
export async function rotateApiKey(deps: Deps, opts: { actor: string; id: string }) {
  const key = generateApiKeySecret(opts.id);
  return deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ keyHash: hashApiKey(key) })
      .where(and(eq(apiKeys.id, opts.id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id, name: apiKeys.name, role: apiKeys.role });
    if (!row) throw new MeshError("NOT_FOUND", `no unrevoked API key ${opts.id}`);
    await recordEvent(tx, { actor: opts.actor, action: "api-key.rotate", target: `api-key:${row.id}`, data: { name: row.name } });
    return { ...row, key };
  });
}

export async function revokeApiKey(deps: Deps, opts: { actor: string; id: string }) {
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.id, opts.id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (rows.length === 0) throw new MeshError("NOT_FOUND", `no unrevoked API key ${opts.id}`);
    await recordEvent(tx, { actor: opts.actor, action: "api-key.revoke", target: `api-key:${opts.id}` });
    return { id: opts.id, revoked: true };
  });
}
