// A TCP proxy the test controls, standing between a process and a server (the control plane
// and its database, say) to make the network fail on demand:
//   pass       bytes flow both ways;
//   blackhole  nothing flows: open connections stay open but every byte is dropped, and new
//              connections are accepted and then ignored — what a client sees when packets
//              are dropped rather than refused (it waits until its own deadline);
//   refuse     open connections are reset and new ones closed at once (the server is down).
// Switching back to `pass` lets new connections through; connections that were blackholed
// stay dead (their bytes are gone, as on a real network), so clients must reconnect.
import net from "node:net";

export type ProxyMode = "pass" | "blackhole" | "refuse";

interface Pair {
  client: net.Socket;
  server?: net.Socket;
  dead: boolean;
}

export class TcpProxy {
  private mode: ProxyMode = "pass";
  private readonly pairs = new Set<Pair>();
  private server?: net.Server;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A proxy in front of a URL's host and port. */
  static forUrl(url: string): TcpProxy {
    const u = new URL(url);
    return new TcpProxy(u.hostname, Number(u.port));
  }

  /** The URL with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  async listen(): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  /** Connections currently held (forwarded or blackholed). */
  get connections(): number {
    return this.pairs.size;
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === "pass") return;
    for (const pair of this.pairs) {
      if (mode === "refuse") this.drop(pair, true);
      else pair.dead = true;
    }
  }

  private accept(client: net.Socket) {
    const pair: Pair = { client, dead: false };
    client.on("error", () => {});
    if (this.mode === "refuse") {
      client.resetAndDestroy();
      return;
    }
    this.pairs.add(pair);
    client.on("close", () => this.drop(pair, false));
    if (this.mode === "blackhole") {
      pair.dead = true;
      return;
    }
    const server = net.connect(this.targetPort, this.targetHost);
    pair.server = server;
    server.on("error", () => this.drop(pair, true));
    server.on("close", () => this.drop(pair, false));
    client.on("data", (chunk) => {
      if (!pair.dead) server.write(chunk);
    });
    server.on("data", (chunk) => {
      if (!pair.dead) client.write(chunk);
    });
  }

  private drop(pair: Pair, reset: boolean) {
    if (!this.pairs.delete(pair)) return;
    pair.dead = true;
    if (reset) {
      pair.client.resetAndDestroy();
      pair.server?.resetAndDestroy();
    } else {
      pair.client.destroy();
      pair.server?.destroy();
    }
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.drop(pair, true);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
