// The one error type of the host: a code that maps to an exit status and a
// message fit for an operator. Anything else that escapes is a bug (exit 1).
export type HostErrorCode = "usage" | "bad-input" | "failure" | "refused";

const EXIT: Record<HostErrorCode, number> = { usage: 2, "bad-input": 2, failure: 1, refused: 1 };

export class HostError extends Error {
  readonly code: HostErrorCode;
  constructor(code: HostErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "HostError";
    this.code = code;
  }
  get exitCode(): number {
    return EXIT[this.code];
  }
}

/** A one-line reason from anything thrown, for logs and report entries. */
export function reasonOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
