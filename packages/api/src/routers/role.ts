import { z } from "zod";
import { Role, RoleName } from "@mesh/protocol";
import { authedProcedure, router } from "../trpc";
import { deleteRole, listRoles, upsertRole } from "../services/roles";

export const roleRouter = router({
  list: authedProcedure.query(({ ctx }) => listRoles(ctx)),
  upsert: authedProcedure.input(Role).mutation(({ ctx, input }) => upsertRole(ctx, { actor: ctx.actor, input })),
  delete: authedProcedure.input(z.strictObject({ name: RoleName })).mutation(({ ctx, input }) => deleteRole(ctx, { actor: ctx.actor, name: input.name })),
});
