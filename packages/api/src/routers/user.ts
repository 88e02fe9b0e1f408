// user.*: dashboard users and their roles; only an admin lists or changes them.
import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { Caller, CreatedUser, PasswordChanged, PasswordSet, UserList, UserRevoked } from "./schemas/user";
import { changeOwnPassword, ChangePasswordInput, createUser, CreateUserInput, listUsers, revokeUser, setUserPassword, SetPasswordInput } from "../services/users";

export const userRouter = router({
  /** Who the caller is: the dashboard hides what a viewer cannot do. */
  me: authedProcedure.output(Caller).query(({ ctx }) => ({
    /** The user's own name when logged in, else the actor (`key:<name>`, `api-key`). */
    name: ctx.user?.name ?? ctx.actor,
    actor: ctx.actor,
    role: ctx.role,
    /** A logged-in user has a password to change; an API key does not. */
    hasPassword: !!ctx.user,
  })),
  list: adminProcedure.output(UserList).query(({ ctx }) => listUsers(ctx)),
  create: adminProcedure.input(CreateUserInput).output(CreatedUser).mutation(({ ctx, input }) => createUser(ctx, { actor: ctx.actor, input })),
  /** Any logged-in user, with their current password; their other sessions end. */
  changePassword: authedProcedure.input(ChangePasswordInput).output(PasswordChanged).mutation(({ ctx, input }) => changeOwnPassword(ctx, { actor: ctx.actor, user: ctx.user, input })),
  /** An admin sets a user's password; every session of that user ends. */
  setPassword: adminProcedure.input(SetPasswordInput).output(PasswordSet).mutation(({ ctx, input }) => setUserPassword(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure.input(z.strictObject({ id: z.uuid() })).output(UserRevoked).mutation(({ ctx, input }) => revokeUser(ctx, { actor: ctx.actor, id: input.id })),
});
