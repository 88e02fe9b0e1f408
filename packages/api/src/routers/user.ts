// user.*: dashboard users and their roles; only an admin lists or changes them.
import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { Caller, CreatedUser, PasswordChanged, PasswordSet, UserList, UserRevoked } from "./schemas/user";
import {
  changeOwnPassword,
  ChangePasswordInput,
  createUser,
  CreateUserInput,
  listUsers,
  revokeUser,
  setUserPassword,
  SetPasswordInput,
} from "../services/users";

export const userRouter = router({
  me: authedProcedure
    .meta({ description: "Who the caller is: name, actor, role, and whether it has a password (a logged-in user) or not (an API key)." })
    .output(Caller)
    .query(({ ctx }) => ({
      /** The user's own name when logged in, else the actor (`key:<name>`, `api-key`). */
      name: ctx.user?.name ?? ctx.actor,
      actor: ctx.actor,
      role: ctx.role,
      /** A logged-in user has a password to change; an API key does not. */
      hasPassword: !!ctx.user,
    })),
  list: adminProcedure
    .meta({ description: "The dashboard users and their roles." })
    .output(UserList)
    .query(({ ctx }) => listUsers(ctx)),
  create: adminProcedure
    .meta({ description: "Creates a dashboard user with a role (admin or viewer) and a password." })
    .input(CreateUserInput)
    .output(CreatedUser)
    .mutation(({ ctx, input }) => createUser(ctx, { actor: ctx.actor, input })),
  changePassword: authedProcedure
    .meta({ description: "Changes the logged-in caller's own password, given the current one; their other sessions end." })
    .input(ChangePasswordInput)
    .output(PasswordChanged)
    .mutation(({ ctx, input }) => changeOwnPassword(ctx, { actor: ctx.actor, user: ctx.user, input })),
  setPassword: adminProcedure
    .meta({ description: "Sets a user's password; every session of that user ends." })
    .input(SetPasswordInput)
    .output(PasswordSet)
    .mutation(({ ctx, input }) => setUserPassword(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure
    .meta({ description: "Revokes a user: they cannot log in, and their sessions end." })
    .input(z.strictObject({ id: z.uuid() }))
    .output(UserRevoked)
    .mutation(({ ctx, input }) => revokeUser(ctx, { actor: ctx.actor, id: input.id })),
});
