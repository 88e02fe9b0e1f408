// tRPC: context, init and the procedures every router builds on. The database
// comes in through the context, never from a module-level import.
import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Deps } from "./deps";
import { authenticate } from "./auth/authenticate";
import { toTrpcError } from "./errors";

export interface TrpcContext extends Deps {
  actor: string | null;
  /** Base URL hosts use to reach this control plane (for enrol commands). */
  publicUrl: string;
  /** Pin of the TLS certificate served, if any: enrol commands carry it. */
  tlsPin?: string;
}

export async function createTrpcContext(opts: { deps: Deps; headers: Headers; publicUrl: string; tlsPin?: string }): Promise<TrpcContext> {
  return { ...opts.deps, actor: await authenticate(opts.deps.db, opts.headers), publicUrl: opts.publicUrl, tlsPin: opts.tlsPin };
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    const zod = error.cause instanceof ZodError ? error.cause.issues.map((i) => ({ path: i.path.join("."), message: i.message })) : null;
    return { ...shape, data: { ...shape.data, stack: undefined, zodIssues: zod } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause) {
    const mapped = toTrpcError(result.error.cause);
    if (mapped instanceof TRPCError) return { ...result, error: mapped } as typeof result;
  }
  return result;
});

/** Every procedure that reads or changes fleet data requires a caller. */
export const authedProcedure = t.procedure.use(mapErrors).use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "log in or send Authorization: Bearer <admin API key>" });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});
