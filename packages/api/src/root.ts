// Composes the routers: the public API hosts' operators script against.
import { router, createCallerFactory } from "./trpc";
import { tokenRouter } from "./routers/token";
import { nodeRouter } from "./routers/node";
import { roleRouter } from "./routers/role";
import { userRouter } from "./routers/user";
import { apiKeyRouter } from "./routers/api-key";
import { eventRouter } from "./routers/event";
import { alertRouter } from "./routers/alert";
import { rolloutRouter } from "./routers/rollout";

export const appRouter = router({
  token: tokenRouter,
  node: nodeRouter,
  role: roleRouter,
  user: userRouter,
  apiKey: apiKeyRouter,
  event: eventRouter,
  alert: alertRouter,
  rollout: rolloutRouter,
});
export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
