// The control plane's one error type: a string code, a message fit for a user,
// and the HTTP status and tRPC code each code maps to. Anything else is a 500.
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";

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
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export class MeshError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "MeshError";
  }
  get status(): number {
    return ERROR_CODES[this.code].http;
  }
  toJSON() {
    return { error: this.code, message: this.message };
  }
}

export function toTrpcError(err: unknown): unknown {
  if (err instanceof MeshError) {
    return new TRPCError({ code: ERROR_CODES[err.code].trpc, message: err.message, cause: err });
  }
  return err;
}

/** The id an internal error is logged under and that its caller is told (never the error itself). */
export function newErrorId(): string {
  return randomBytes(6).toString("hex");
}
