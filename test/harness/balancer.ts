// A small TCP load balancer standing in for the operator's (an LB, or DNS over several
// instances): hosts are given its URL and never learn which instance serves them.
// Each connection goes round-robin to the next backend of its pool; a backend whose
// connect fails (a killed instance) is skipped for that connection. Bytes are piped,
// never parsed, except the first request line, read to pick the pool by path prefix,
// as an operator's rule sends /agent to gateways and the rest to web instances.
import net from "node:net";

export interface Backend {
  host: string;
  port: number;
}

export interface Pool {
  /** Connections whose first request's path starts with this go to this pool; "" matches everything. */
  pathPrefix: string;
  backends: Backend[];
}

/** The first request line (`GET /path HTTP/1.1`) must arrive within this many bytes. */
const MAX_REQUEST_LINE = 8192;

export const backendOf = (url: string): Backend => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

export class Balancer {
  url = "";
  /** Connections forwarded, per backend "host:port", and those no backend would take. */
  readonly forwarded = new Map<string, number>();
  refused = 0;
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Each pool's own round-robin cursor, as an LB keeps one per upstream group. */
  private readonly cursors: number[];
  private held: Array<() => void> | null = null;

  constructor(private readonly pools: Pool[]) {
    this.cursors = pools.map(() => 0);
  }

  static async start(pools: Pool[]): Promise<Balancer> {
    const lb = new Balancer(pools);
    await lb.listen();
    return lb;
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  /**
   * New connections wait (accepted, nothing forwarded) until release(): hosts whose links
   * dropped stay away for as long as the test needs, without any timing.
   */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const go of waiting) go();
  }

  /** Connections waiting in hold(). */
  get waiting(): number {
    return this.held?.length ?? 0;
  }

  private track(socket: net.Socket) {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    // A reset on either side ends the pair (below); the error itself is expected.
    socket.on("error", () => {});
  }

  private accept(client: net.Socket): void {
    this.track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const eol = head.indexOf("\r\n");
      if (eol === -1 && head.length < MAX_REQUEST_LINE) return;
      client.off("data", onData);
      client.pause();
      const path = eol === -1 ? "" : (head.subarray(0, eol).toString("latin1").split(" ")[1] ?? "");
      const forward = () => this.forward(client, head, path);
      if (this.held) this.held.push(forward);
      else forward();
    };
    client.on("data", onData);
  }

  private forward(client: net.Socket, head: Buffer, path: string): void {
    if (client.destroyed) return;
    const p = this.pools.findIndex((pool) => path.startsWith(pool.pathPrefix));
    const pool = this.pools[p];
    if (!pool || pool.backends.length === 0) {
      this.refused++;
      client.destroy();
      return;
    }
    const start = this.cursors[p]!;
    this.cursors[p] = (start + 1) % pool.backends.length;
    this.tryBackend(client, head, pool.backends, start, 0);
  }

  /** Connects to backends[(start + tried) % n], moving on to the next when the connect fails. */
  private tryBackend(client: net.Socket, head: Buffer, backends: Backend[], start: number, tried: number): void {
    if (client.destroyed) return;
    if (tried === backends.length) {
      this.refused++;
      client.destroy();
      return;
    }
    const backend = backends[(start + tried) % backends.length]!;
    const upstream = net.connect(backend.port, backend.host);
    this.track(upstream);
    const failed = () => this.tryBackend(client, head, backends, start, tried + 1);
    upstream.once("error", failed);
    upstream.once("connect", () => {
      upstream.off("error", failed);
      const key = `${backend.host}:${backend.port}`;
      this.forwarded.set(key, (this.forwarded.get(key) ?? 0) + 1);
      upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      // Either side gone (a killed instance closes its sockets) ends the other: the host sees its link drop.
      upstream.once("close", () => client.destroy());
      client.once("close", () => upstream.destroy());
    });
  }

  async close(): Promise<void> {
    this.release();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
