// Who may call a procedure, read from the middleware it was built on (trpc.ts): adminProcedure adds
// the admin check to authedProcedure's chain, so a procedure's chain says which one it came from.
import { adminProcedure, authedProcedure } from "../trpc";

export type ProcedureAccess = "admin" | "viewer" | "public";

type Chain = { _def: { middlewares: readonly unknown[] } };
const chain = (p: unknown) => (p as Chain)._def.middlewares;
const authedChain = chain(authedProcedure);
const adminCheck = chain(adminProcedure)[authedChain.length];

export function procedureAccess(procedure: unknown): ProcedureAccess {
  const middlewares = chain(procedure);
  if (adminCheck && middlewares.includes(adminCheck)) return "admin";
  if (authedChain.every((m) => middlewares.includes(m))) return "viewer";
  return "public";
}
