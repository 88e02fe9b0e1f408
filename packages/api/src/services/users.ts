// user.list / create / revoke / changePassword / setPassword: who may use the dashboard,
// as admin or viewer. A revoked user's sessions, or a changed password's, end at once.
import { z } from "zod";
import { and, asc, count, eq, isNull, ne, sql } from "drizzle-orm";
import { sessions, users, USER_ROLES } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { hashPassword, verifyPassword } from "../auth/passwords";
import { userActor } from "../auth/actor";
import type { SessionUser } from "../auth/caller";
import { recordEvent } from "./record-event";
import { CallerName } from "./caller-name";
import { describeWait, FailureBackoff } from "../http/failure-backoff";

// Whoever holds a stolen session must not be able to guess the password behind it:
// wrong current passwords back off per (user, session), like logins per (account, address),
// so a thief's guesses in their session never lock the owner's own session out of changing it
// (in memory, per instance; a new session needs the password, so a thief gets no fresh keys).
const currentPasswordFailures = new FailureBackoff({ freeFailures: 5 });

export const Password = z.string().min(10, "at least 10 characters").max(1024);

export const CreateUserInput = z.strictObject({
  name: CallerName,
  role: z.enum(USER_ROLES),
  password: Password,
});
export type CreateUserInput = z.input<typeof CreateUserInput>;

export const ChangePasswordInput = z.strictObject({
  currentPassword: z.string().min(1, "enter your current password").max(1024),
  newPassword: Password,
});
export type ChangePasswordInput = z.input<typeof ChangePasswordInput>;

export const SetPasswordInput = z.strictObject({ id: z.uuid(), password: Password });
export type SetPasswordInput = z.input<typeof SetPasswordInput>;

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
    await recordEvent(tx, { actor: opts.actor, action: "user.create", target: userActor(row.name), data: { role: row.role } });
    return row;
  });
}

export async function revokeUser(deps: Deps, opts: { actor: string; id: string }) {
  return deps.db.transaction(async (tx) => {
    const [user] = await tx
      .select()
      .from(users)
      .where(and(eq(users.id, opts.id), isNull(users.revokedAt)))
      .for("update");
    if (!user) throw new MeshError("NOT_FOUND", `no active user with id ${opts.id}`);
    if (user.role === "admin") {
      const [others] = await tx
        .select({ n: count() })
        .from(users)
        .where(and(eq(users.role, "admin"), isNull(users.revokedAt), ne(users.id, user.id)));
      if (!others?.n) throw new MeshError("CONFLICT", "this is the last admin; create another admin first");
    }
    await tx.update(users).set({ revokedAt: sql`now()` }).where(eq(users.id, user.id));
    await tx.delete(sessions).where(eq(sessions.user, user.name));
    await recordEvent(tx, { actor: opts.actor, action: "user.revoke", target: userActor(user.name) });
    return { id: user.id, revoked: true };
  });
}

/**
 * A logged-in user changes their own password, proving the current one. Every
 * other session of theirs ends; the one making the change stays.
 */
export async function changeOwnPassword(deps: Deps, opts: { actor: string; user: SessionUser | null; input: ChangePasswordInput }) {
  if (!opts.user) throw new MeshError("FORBIDDEN", "only a user logged in to the dashboard has a password to change; API keys are rotated with apiKey.rotate");
  const input = ChangePasswordInput.parse(opts.input);
  const name = opts.user.name;
  const [user] = await deps.db
    .select()
    .from(users)
    .where(and(eq(users.name, name), isNull(users.revokedAt)));
  if (!user) throw new MeshError("UNAUTHORIZED", "your account no longer exists");
  const failureKey = `${user.id}:${opts.user.sessionIdHash}`;
  const attempt = currentPasswordFailures.attempt(failureKey);
  if (!attempt.allowed) throw new MeshError("RATE_LIMITED", `too many wrong current passwords; try again in ${describeWait(attempt.retryAfterMs)}`);
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) throw new MeshError("BAD_INPUT", "the current password is wrong");
  currentPasswordFailures.succeeded(failureKey);
  const passwordHash = await hashPassword(input.newPassword);
  const keep = opts.user.sessionIdHash;
  return deps.db.transaction(async (tx) => {
    // Only if nobody changed it since it was verified above.
    const changed = await tx
      .update(users)
      .set({ passwordHash })
      .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash), isNull(users.revokedAt)))
      .returning({ id: users.id });
    if (changed.length === 0) throw new MeshError("CONFLICT", "your password was changed meanwhile; log in again");
    const ended = await tx
      .delete(sessions)
      .where(and(eq(sessions.user, name), ne(sessions.idHash, keep)))
      .returning({ idHash: sessions.idHash });
    await recordEvent(tx, { actor: opts.actor, action: "user.change-password", target: userActor(name), data: { sessionsEnded: ended.length } });
    return { changed: true, sessionsEnded: ended.length };
  });
}

/** An admin sets another user's password (a forgotten one, a leaked one): all their sessions end. */
export async function setUserPassword(deps: Deps, opts: { actor: string; input: SetPasswordInput }) {
  const input = SetPasswordInput.parse(opts.input);
  const passwordHash = await hashPassword(input.password);
  return deps.db.transaction(async (tx) => {
    const [user] = await tx
      .update(users)
      .set({ passwordHash })
      .where(and(eq(users.id, input.id), isNull(users.revokedAt)))
      .returning({ id: users.id, name: users.name });
    if (!user) throw new MeshError("NOT_FOUND", `no active user with id ${input.id}`);
    const ended = await tx.delete(sessions).where(eq(sessions.user, user.name)).returning({ idHash: sessions.idHash });
    await recordEvent(tx, { actor: opts.actor, action: "user.set-password", target: userActor(user.name), data: { sessionsEnded: ended.length } });
    return { id: user.id, changed: true, sessionsEnded: ended.length };
  });
}
