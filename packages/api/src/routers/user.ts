// user.*: dashboard users and their roles; only an admin lists or changes them.
import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { createUser, CreateUserInput, listUsers, revokeUser } from "../services/users";

export const userRouter = router({
  /** Who the caller is: the dashboard hides what a viewer cannot do. */
  me: authedProcedure.query(({ ctx }) => ({ name: ctx.actor, role: ctx.role })),
  list: adminProcedure.query(({ ctx }) => listUsers(ctx)),
  create: adminProcedure.input(CreateUserInput).mutation(({ ctx, input }) => createUser(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure.input(z.strictObject({ id: z.uuid() })).mutation(({ ctx, input }) => revokeUser(ctx, { actor: ctx.actor, id: input.id })),
});
