// The daemon's local door: a unix socket in the state dir (control.sock, mode 0600 inside the 0700
// state dir: root only) on which `mesh-host reconcile` asks the running daemon for a reconcile and
// waits for its result. One JSON line each way, parsed with zod, with size limits. The daemon holds
// the state dir's lock, so the socket it finds at start is a dead daemon's and is replaced.
import { promises as fs } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { z } from "zod";
import { Report } from "@mesh/protocol";
import { reasonOf } from "../host-error";
import type { Logger } from "../log";
import { systemClock } from "../clock";
import { STATE_DIR_NAMES } from "./keys";

export const CONTROL_SOCKET = STATE_DIR_NAMES.controlSocket;
/** A request line is small; an answer carries a report (bounded by the protocol) and the changes. */
const MAX_REQUEST_BYTES = 4 * 1024;
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export const ControlRequest = z.strictObject({
  type: z.literal("reconcile"),
  reason: z.string().max(200).optional(),
});
export type ControlRequest = z.infer<typeof ControlRequest>;

const ChangeLine = z.strictObject({
  kind: z.string().max(32),
  id: z.string().max(256),
  type: z.string().max(32),
  subject: z.string().max(4200),
  detail: z.string().max(2048).optional(),
});
export const ControlAnswer = z.discriminatedUnion("ok", [
  z.strictObject({ ok: z.literal(true), report: Report, changes: z.array(ChangeLine).max(20_000), unchanged: z.number().int().min(0) }),
  z.strictObject({ ok: z.literal(false), error: z.string().max(4096) }),
]);
export type ControlAnswer = z.infer<typeof ControlAnswer>;

export function controlSocketPath(stateDir: string): string {
  return join(stateDir, CONTROL_SOCKET);
}

/** Reads one newline-terminated line of at most `max` bytes. */
function readLine(socket: Socket, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(10);
      const part = nl >= 0 ? chunk.subarray(0, nl) : chunk;
      size += part.length;
      if (size > max) return done(new Error(`line longer than ${max} bytes`));
      chunks.push(part);
      if (nl >= 0) done(null);
    };
    const done = (err: Error | null) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", done);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onEnd = () => done(new Error("closed before a full line"));
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("error", done);
  });
}

/** Serves reconcile requests until closed; a socket that cannot be made is one log line (the daemon runs on). */
export async function serveControlSocket(
  stateDir: string,
  handle: (request: ControlRequest) => Promise<ControlAnswer>,
  log: Logger,
): Promise<{ close(): Promise<void> }> {
  const path = controlSocketPath(stateDir);
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    socket.on("error", () => undefined);
    void (async () => {
      let answer: ControlAnswer;
      try {
        const parsed = ControlRequest.safeParse(JSON.parse(await readLine(socket, MAX_REQUEST_BYTES)));
        answer = parsed.success ? await handle(parsed.data) : { ok: false, error: `bad request: ${parsed.error.issues[0]?.message ?? "invalid"}` };
      } catch (err) {
        answer = { ok: false, error: `bad request: ${reasonOf(err)}`.slice(0, 4096) };
      }
      if (!socket.destroyed) socket.end(JSON.stringify(answer) + "\n");
    })();
  });
  try {
    await fs.rm(path, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await fs.chmod(path, 0o600);
  } catch (err) {
    server.close();
    log.warn(
      { path, reason: reasonOf(err) },
      "cannot open the control socket; `mesh-host reconcile` cannot reach this daemon (the timer and the link still reconcile)",
    );
    return { close: async () => undefined };
  }
  return {
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(path, { force: true }).catch(() => undefined);
    },
  };
}

/** Why the daemon could not be asked: none listens (`absent`), or the exchange failed. */
export class ControlUnreachable extends Error {
  constructor(
    readonly absent: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** Asks the daemon on `stateDir` and waits for its answer (a reconcile may take minutes: packages). */
export function askDaemon(stateDir: string, request: ControlRequest, timeoutMs = 30 * 60_000): Promise<ControlAnswer> {
  const path = controlSocketPath(stateDir);
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const timer = systemClock.setTimeout(() => {
      socket.destroy();
      reject(new ControlUnreachable(false, `no answer from the daemon within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    socket.once("error", (err: NodeJS.ErrnoException) => {
      systemClock.clearTimeout(timer);
      const absent = err.code === "ENOENT" || err.code === "ECONNREFUSED";
      reject(new ControlUnreachable(absent, `${path}: ${reasonOf(err)}`));
    });
    socket.once("connect", () => {
      socket.write(JSON.stringify(ControlRequest.parse(request)) + "\n");
      readLine(socket, MAX_ANSWER_BYTES).then(
        (line) => {
          systemClock.clearTimeout(timer);
          socket.destroy();
          let parsed;
          try {
            parsed = ControlAnswer.safeParse(JSON.parse(line));
          } catch {
            return reject(new ControlUnreachable(false, "the daemon's answer is not JSON"));
          }
          if (!parsed.success)
            return reject(new ControlUnreachable(false, `the daemon's answer does not fit: ${parsed.error.issues[0]?.message ?? "invalid"}`));
          resolve(parsed.data);
        },
        (err) => {
          systemClock.clearTimeout(timer);
          socket.destroy();
          reject(new ControlUnreachable(false, `the daemon closed the socket: ${reasonOf(err)}`));
        },
      );
    });
  });
}
