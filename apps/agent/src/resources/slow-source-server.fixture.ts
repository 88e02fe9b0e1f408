// For source tests and the download bench: an HTTP handler serving files at /f/<i> the way a
// slow, lossy link delivers them: each answer late, the body in small chunks with pauses, and
// chosen connections cut partway (the socket destroyed). Honours one `Range: bytes=N-`.
import type { IncomingMessage, ServerResponse } from "node:http";

export interface SlowServer {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Every request: which file, from which byte. */
  requests: { file: number; from: number }[];
  /** Most requests answered at once. */
  maxInFlight: number;
}

export function serveSlowly(
  files: Buffer[],
  opts: { latencyMs: number; chunkBytes: number; chunkDelayMs: number; cut?: (file: number, attempt: number) => boolean },
): SlowServer {
  const attempts = new Map<number, number>();
  let inFlight = 0;
  const server: SlowServer = {
    requests: [],
    maxInFlight: 0,
    handler: (req, res) => {
      const file = Number(/^\/f\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
      const data = files[file];
      if (!data) return void res.writeHead(404).end();
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
      const from = range ? Number(range[1]) : 0;
      const attempt = attempts.get(file) ?? 0;
      attempts.set(file, attempt + 1);
      server.requests.push({ file, from });
      server.maxInFlight = Math.max(server.maxInFlight, ++inFlight);
      // Counted until the server is done with it (its last byte written, or the cut), not until the close is seen.
      let done = false;
      const finish = () => {
        if (!done) inFlight--;
        done = true;
      };
      res.once("close", finish);
      const cutAt = opts.cut?.(file, attempt) ? from + Math.floor((data.length - from) / 2) : Infinity;
      setTimeout(() => {
        if (range) res.writeHead(206, { "content-length": data.length - from, "content-range": `bytes ${from}-${data.length - 1}/${data.length}` });
        else res.writeHead(200, { "content-length": data.length });
        let at = from;
        const pump = () => {
          if (res.destroyed) return finish();
          if (at >= cutAt) {
            finish();
            return void res.socket?.destroy();
          }
          if (at >= data.length) {
            finish();
            return void res.end();
          }
          const end = Math.min(at + opts.chunkBytes, data.length, cutAt);
          if (end >= data.length) finish(); // the client may ask for the next as soon as this is read
          res.write(data.subarray(at, end));
          at = end;
          setTimeout(pump, opts.chunkDelayMs);
        };
        pump();
      }, opts.latencyMs);
    },
  };
  return server;
}
