// tRPC: context, init and the procedures every router builds on. The database
// comes in through the context, never from a module-level import.
import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Deps } from "./deps";
import { authenticateCaller } from "./auth/authenticate-caller";
import type { UserRole } from "@mesh/db";
import type { SessionUser } from "./auth/caller";
import { describeUnstorableText, findUnstorableText } from "@mesh/protocol";
import { MeshError, newErrorId, toTrpcError } from "./errors";

export interface TrpcContext extends Deps {
  actor: string | null;
  /** What the caller may do; null when there is no caller. */
  role: UserRole | null;
  /** The dashboard user and session, when the caller logged in (not for API keys). */
  user: SessionUser | null;
  /** Base URL hosts use to reach this control plane (for enrol commands). */
  publicUrl: string;
  /** Pin of the TLS certificate served, if any: enrol commands carry it. */
  tlsPin?: string;
}

export async function createTrpcContext(opts: { deps: Deps; headers: Headers; publicUrl: string; tlsPin?: string }): Promise<TrpcContext> {
  // The caller is looked up before any procedure runs: a database that cannot answer is a 503 here too.
  const caller = await authenticateCaller(opts.deps.db, opts.headers).catch((err) => {
    throw toTrpcError(err);
  });
  return { ...opts.deps, actor: caller?.name ?? null, role: caller?.role ?? null, user: caller?.user ?? null, publicUrl: opts.publicUrl, tlsPin: opts.tlsPin };
}

/**
 * The id an internal error is logged under (by the route's onError) and shown with
 * (by the formatter); one per error object, so both see the same one.
 */
const errorIds = new WeakMap<object, string>();
export function errorIdOf(error: object): string {
  let id = errorIds.get(error);
  if (!id) errorIds.set(error, (id = newErrorId()));
  return id;
}

/** What a procedure says of itself in the API reference (docs/api.md). */
export interface ProcedureMeta {
  /** One or two sentences: what it does, for someone scripting against it. */
  description?: string;
}

const t = initTRPC
  .context<TrpcContext>()
  .meta<ProcedureMeta>()
  .create({
    errorFormatter({ shape, error }) {
      if (error.code === "INTERNAL_SERVER_ERROR") {
        // Unknown errors carry driver messages, SQL and paths: the caller gets an id, the log the rest.
        const errorId = errorIdOf(error);
        return {
          ...shape,
          message: `internal error (id ${errorId}); the control plane's log has the details`,
          data: { ...shape.data, stack: undefined, zodIssues: null, errorId },
        };
      }
      const zod = error.cause instanceof ZodError ? error.cause.issues.map((i) => ({ path: i.path.join("."), message: i.message })) : null;
      const details = error.cause instanceof MeshError ? error.cause.details : undefined;
      return { ...shape, data: { ...shape.data, stack: undefined, zodIssues: zod, ...(details === undefined ? {} : { details }) } };
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

/** Text Postgres cannot store (NUL, lone surrogates): refused for every procedure's input, naming the field, before any schema runs. */
const refuseUnstorableText = t.middleware(async ({ getRawInput, next }) => {
  const found = findUnstorableText(await getRawInput());
  if (found) throw new TRPCError({ code: "BAD_REQUEST", message: describeUnstorableText(found) });
  return next();
});

/** Every procedure that reads or changes fleet data requires a caller. */
export const authedProcedure = t.procedure
  .use(mapErrors)
  .use(({ ctx, next }) => {
    if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "log in or send Authorization: Bearer <admin API key>" });
    return next({ ctx: { ...ctx, actor: ctx.actor, role: ctx.role ?? "viewer" } });
  })
  .use(refuseUnstorableText);

/** Every mutation: only an admin may change the fleet, users or keys; a viewer gets FORBIDDEN. */
export const adminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.role !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "this needs the admin role; you are logged in as a viewer" });
  return next();
});
