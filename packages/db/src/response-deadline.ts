// A socket for postgres.js that gives up on a silent server. postgres.js has no per-query client
// timeout, and a server whose packets are dropped (not refused) cancels nothing: the query, its
// connection and every query pipelined behind it would wait for TCP to give up (minutes, or never
// behind a proxy that still acknowledges). This socket follows the answers the server owes (a
// ReadyForQuery per start-up, simple Query and Sync; an answer per Flush) and, while one is owed,
// destroys itself when no byte arrives for the deadline; postgres.js then fails those queries and
// reconnects on demand. An idle connection owes nothing, so a quiet LISTEN connection is not cut.
import net from "node:net";

/** The error a connection is destroyed with; recognised by isDatabaseUnreachable. */
export const NO_RESPONSE = "DATABASE_NO_RESPONSE";

const QUERY = 0x51; // 'Q'
const SYNC = 0x53; // 'S' (from the client)
const FLUSH = 0x48; // 'H'
const READY_FOR_QUERY = 0x5a; // 'Z'
/** The last message of what a Flush makes the server send: RowDescription, NoData, PortalSuspended, CommandComplete, ErrorResponse. */
const FLUSH_ANSWERS = new Set([0x54, 0x6e, 0x73, 0x43, 0x45]); // T n s C E

/**
 * Splits a Postgres protocol byte stream into messages without copying bodies: a type byte (absent
 * on the client's first message, the start-up or cancel request) then a length that counts itself.
 */
export class MessageFramer {
  private header = Buffer.alloc(5);
  private headerLength = 0;
  private skip = 0;
  private untyped: boolean;

  constructor(
    firstIsUntyped: boolean,
    private readonly onMessage: (type: number | null) => void,
  ) {
    this.untyped = firstIsUntyped;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const need = this.untyped ? 4 : 5;
      const n = Math.min(need - this.headerLength, chunk.length - i);
      chunk.copy(this.header, this.headerLength, i, i + n);
      this.headerLength += n;
      i += n;
      if (this.headerLength < need) return;
      const type = this.untyped ? null : this.header[0]!;
      const length = this.header.readUInt32BE(this.untyped ? 0 : 1);
      this.skip = Math.max(0, length - 4);
      this.headerLength = 0;
      this.untyped = false;
      this.onMessage(type);
    }
  }
}

export interface ResponseDeadlineOptions {
  responseTimeoutMs: number;
}

/**
 * postgres.js's `socket` option: a plain TCP or Unix socket to the next host, with the deadline.
 * The pools made with one option (the main pool and its LISTEN connection share it) share a fate:
 * when one connection is found silent, the idle ones are closed too, since they went through the
 * same network and would each cost a request its own full deadline to find out (and the idle LISTEN
 * connection would never find out). postgres.js reopens them on demand, and re-LISTENs.
 */
export function responseDeadlineSocket(opts: ResponseDeadlineOptions) {
  let next = 0;
  const live = new Set<Watched>();
  const condemnIdle = (err: Error) => {
    for (const w of live) if (w.owed() === 0) w.socket.destroy(err);
  };
  return (o: { host: string[]; port: number[]; path?: string | false }): net.Socket => {
    const host = o.host[next % o.host.length]!;
    const port = o.port[next % o.port.length]!;
    next++;
    const socket = o.path ? net.connect(o.path) : net.connect(port, host);
    // What postgres.js names in its connection errors (it sets these only on sockets it makes itself).
    Object.assign(socket, { host: o.path || host, port });
    const watched = watch(socket, opts.responseTimeoutMs, condemnIdle);
    live.add(watched);
    socket.once("close", () => live.delete(watched));
    return socket;
  };
}

interface Watched {
  socket: net.Socket;
  owed(): number;
}

function watch(socket: net.Socket, timeoutMs: number, onExpired: (err: Error) => void): Watched {
  // What the server owes, in order: a ReadyForQuery per start-up, Query and Sync; an answer per Flush
  // (postgres.js describes a new statement with Parse, Describe, Flush, and no Sync until it has the answer).
  const owed: Array<"ready" | "flush"> = [];
  let timer: NodeJS.Timeout | null = null;
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = owed.length > 0 ? setTimeout(expire, timeoutMs) : null;
  };
  const expire = () => {
    const message = `the database sent nothing for ${timeoutMs} ms while a query waited; the connection is taken for dead`;
    socket.destroy(Object.assign(new Error(message), { code: NO_RESPONSE }));
    onExpired(Object.assign(new Error(`another connection to the database fell silent; this idle one is closed with it`), { code: NO_RESPONSE }));
  };
  const sent = new MessageFramer(true, (type) => {
    const expect = type === null || type === QUERY || type === SYNC ? "ready" : type === FLUSH ? "flush" : null;
    if (!expect) return;
    owed.push(expect);
    if (owed.length === 1) arm();
  });
  const received = new MessageFramer(false, (type) => {
    if (type === READY_FOR_QUERY) {
      // A server in an error state skips to the Sync: flushes before it are answered by this too.
      while (owed[0] === "flush") owed.shift();
      owed.shift();
    } else if (owed[0] === "flush" && type !== null && FLUSH_ANSWERS.has(type)) owed.shift();
  });
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (Buffer.isBuffer(chunk)) sent.push(chunk);
    else if (typeof chunk === "string") sent.push(Buffer.from(chunk));
    return write(chunk, ...rest);
  }) as typeof socket.write;
  socket.on("data", (chunk: Buffer) => {
    received.push(chunk);
    // Any byte is progress: a long result streams; a statement the server cancels answers with an error.
    arm();
  });
  socket.once("close", () => {
    if (timer) clearTimeout(timer);
    timer = null;
  });
  return { socket, owed: () => owed.length };
}
