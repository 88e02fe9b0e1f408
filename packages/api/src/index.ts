// The control plane's domain: services, tRPC routers, the agent gateway.
export { appRouter, createCaller, type AppRouter } from "./root";
export { createTrpcContext, type TrpcContext } from "./trpc";
export type { Deps } from "./deps";
export { createLogger, type Logger } from "./log";
export { MeshError, type ErrorCode } from "./errors";
export { handleEnrol, createEnrolLimits, type EnrolLimits } from "./http/enrol-handler";
export { RateLimiter } from "./http/rate-limiter";
export { jsonError, readJsonBody } from "./http/json-body";
export { ensureAdminCredentials } from "./auth/credentials";
export { login, logout, sessionCookie, clearedSessionCookie, readCookie, SESSION_COOKIE } from "./auth/sessions";
export { authenticate } from "./auth/authenticate";
export { compileDeclaration } from "./compile/compile-declaration";
export { handleFileUpload, handleFileDownload } from "./http/files-handler";
export { authenticateNodeRequest } from "./http/node-signature";
export { createPostgresGrantProvider } from "./grants/postgres-provider";
export type { GrantProvider, GrantProviders } from "./grants/provider";
