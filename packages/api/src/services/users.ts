// user.list / user.create / user.revoke: who may use the dashboard, as admin or
// viewer. A revoked user's sessions end at once; the last admin cannot be revoked.
import { z } from "zod";
import { and, asc, count, eq, isNull, ne } from "drizzle-orm";
import { sessions, users, USER_ROLES } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { hashPassword } from "../auth/passwords";
import { recordEvent } from "./record-event";
import { CallerName } from "./caller-name";

export const CreateUserInput = z.strictObject({
  name: CallerName,
  role: z.enum(USER_ROLES),
  password: z.string().min(10, "at least 10 characters").max(1024),
});
export type CreateUserInput = z.input<typeof CreateUserInput>;

export async function listUsers(deps: Pick<Deps, "db">) {
  const items = await deps.db
    .select({ id: users.id, name: users.name, role: users.role, createdBy: users.createdBy, createdAt: users.createdAt, revokedAt: users.revokedAt })
    .from(users)
    .orderBy(asc(users.name))
    .limit(500);
  return { items };
}

export async function createUser(deps: Deps, opts: { actor: string; input: CreateUserInput }) {
  const input = CreateUserInput.parse(opts.input);
  const passwordHash = await hashPassword(input.password);
  return deps.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(users)
      .values({ name: input.name, role: input.role, passwordHash, createdBy: opts.actor })
      .onConflictDoNothing()
      .returning({ id: users.id, name: users.name, role: users.role });
    if (!row) throw new MeshError("CONFLICT", `a user named ${input.name} exists already`);
    await recordEvent(tx, { actor: opts.actor, action: "user.create", target: `user:${row.name}`, data: { role: row.role } });
    return row;
  });
}

export async function revokeUser(deps: Deps, opts: { actor: string; id: string }) {
  return deps.db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(and(eq(users.id, opts.id), isNull(users.revokedAt))).for("update");
    if (!user) throw new MeshError("NOT_FOUND", `no active user with id ${opts.id}`);
    if (user.role === "admin") {
      const [others] = await tx.select({ n: count() }).from(users).where(and(eq(users.role, "admin"), isNull(users.revokedAt), ne(users.id, user.id)));
      if (!others?.n) throw new MeshError("CONFLICT", "this is the last admin; create another admin first");
    }
    await tx.update(users).set({ revokedAt: new Date() }).where(eq(users.id, user.id));
    await tx.delete(sessions).where(eq(sessions.user, user.name));
    await recordEvent(tx, { actor: opts.actor, action: "user.revoke", target: `user:${user.name}` });
    return { id: user.id, revoked: true };
  });
}
