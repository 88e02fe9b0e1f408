// The control plane's one error type: a string code, a message fit for a user,
// and the HTTP status and tRPC code each code maps to. A driver error meaning the database
// cannot answer is a 503 with Retry-After; anything else is a 500.
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { isDatabaseUnreachable } from "@mesh/db";
import type { LinkRefusal } from "@mesh/protocol";

export const ERROR_CODES = {
  BAD_INPUT: { http: 400, trpc: "BAD_REQUEST" },
  UNAUTHORIZED: { http: 401, trpc: "UNAUTHORIZED" },
  TOKEN_UNKNOWN: { http: 401, trpc: "UNAUTHORIZED" },
  TOKEN_USED: { http: 401, trpc: "UNAUTHORIZED" },
  TOKEN_EXPIRED: { http: 401, trpc: "UNAUTHORIZED" },
  TOKEN_REVOKED: { http: 401, trpc: "UNAUTHORIZED" },
  TOKEN_MALFORMED: { http: 401, trpc: "UNAUTHORIZED" },
  FORBIDDEN: { http: 403, trpc: "FORBIDDEN" },
  NOT_FOUND: { http: 404, trpc: "NOT_FOUND" },
  CONFLICT: { http: 409, trpc: "CONFLICT" },
  TOO_LARGE: { http: 413, trpc: "PAYLOAD_TOO_LARGE" },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, trpc: "UNSUPPORTED_MEDIA_TYPE" },
  RATE_LIMITED: { http: 429, trpc: "TOO_MANY_REQUESTS" },
  DATABASE_UNAVAILABLE: { http: 503, trpc: "SERVICE_UNAVAILABLE" },
  /** A part the control plane needs is not installed (e.g. the apt repository's tools). */
  UNAVAILABLE: { http: 503, trpc: "SERVICE_UNAVAILABLE" },
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export class MeshError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** When the caller may try again (the Retry-After header), for a refusal that passes. */
    readonly retryAfterSeconds?: number,
    /** Structured facts about a refusal (e.g. the conflicts a save would cause), sent as the tRPC error's data.details. */
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "MeshError";
  }
  get status(): number {
    return ERROR_CODES[this.code].http;
  }
  /** The response headers the error brings: Retry-After when it has one. */
  headers(): Record<string, string> {
    return this.retryAfterSeconds === undefined ? {} : { "retry-after": String(this.retryAfterSeconds) };
  }
  toJSON(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}

/**
 * A host refused by its node key (a signed HTTP request): the body carries the refusal's code
 * (packages/protocol link-refusal.ts), as the gateway's refusal of an upgrade does.
 */
export class NodeRefused extends MeshError {
  constructor(readonly refusal: LinkRefusal) {
    super(refusal.status === 403 ? "FORBIDDEN" : refusal.status === 401 ? "UNAUTHORIZED" : "UNAVAILABLE", refusal.body.message);
    this.name = "NodeRefused";
  }
  override toJSON() {
    return this.refusal.body;
  }
}

/** What a client is told to wait when the database cannot answer: about one reconnect attempt. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export const DATABASE_UNAVAILABLE_MESSAGE = "the database is unreachable or did not answer in time; try again in a few seconds";

/**
 * The error as a caller may see it: a MeshError as it is; a driver error meaning the database is
 * down, unreachable or out of time becomes DATABASE_UNAVAILABLE (its message carries SQL: dropped);
 * null for anything else, which is a 500 logged with its stack.
 */
export function asMeshError(err: unknown): MeshError | null {
  if (err instanceof MeshError) return err;
  if (err instanceof TRPCError && err.cause instanceof MeshError) return err.cause;
  if (isDatabaseUnreachable(err)) return new MeshError("DATABASE_UNAVAILABLE", DATABASE_UNAVAILABLE_MESSAGE, DATABASE_RETRY_AFTER_SECONDS);
  return null;
}

export function toTrpcError(err: unknown): unknown {
  const mesh = asMeshError(err);
  if (mesh) return new TRPCError({ code: ERROR_CODES[mesh.code].trpc, message: mesh.message, cause: mesh });
  return err;
}

/** The id an internal error is logged under and that its caller is told (never the error itself). */
export function newErrorId(): string {
  return randomBytes(6).toString("hex");
}
