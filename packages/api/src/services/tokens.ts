// token.list and token.revoke: what was issued, what became of it, and taking
// back one that has not been used up.
import { z } from "zod";
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { enrolmentTokens, nodes } from "@mesh/db";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { recordEvent } from "./record-event";

export const ListTokensInput = z
  .strictObject({ limit: z.number().int().min(1).max(500).default(50), offset: z.number().int().min(0).default(0) })
  .default({ limit: 50, offset: 0 });

export type TokenStatus = "unused" | "used" | "expired" | "revoked";

export async function listTokens(deps: Deps, raw: z.input<typeof ListTokensInput>) {
  const input = ListTokensInput.parse(raw);
  const rows = await deps.db.select().from(enrolmentTokens).orderBy(desc(enrolmentTokens.createdAt)).limit(input.limit).offset(input.offset);
  const [total] = await deps.db.select({ n: count() }).from(enrolmentTokens);
  const now = nowOf(deps);
  const items = await Promise.all(
    rows.map(async (t) => {
      const enrolled = await deps.db.select({ id: nodes.id, name: nodes.name }).from(nodes).where(eq(nodes.tokenId, t.id)).limit(20);
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
        nodes: enrolled,
      };
    }),
  );
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
