// Composes the routers: the public API hosts' operators script against.
import { router, createCallerFactory } from "./trpc";
import { tokenRouter } from "./routers/token";
import { nodeRouter } from "./routers/node";
import { roleRouter } from "./routers/role";

export const appRouter = router({
  token: tokenRouter,
  node: nodeRouter,
  role: roleRouter,
});
export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
