// A Postgres server of the test's own, for fault tests that stop, restart or kill the
// database under a running control plane. It is never the machine's shared server: the
// cluster lives in a temporary directory, listens on a free loopback port, and is removed
// when the test ends. Postgres refuses to run as root, so the cluster belongs to the
// `postgres` user (created by Debian's package) and its commands run as that user.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const binDir = (): string => {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, "bin", "pg_ctl")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return path.join(root, versions[0]!, "bin");
};

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Runs a server binary as the `postgres` user (root when the test already is someone else). */
const asPostgres = (bin: string, args: string[]) => {
  const asRoot = process.getuid?.() === 0;
  const r = asRoot ? spawnSync("runuser", ["-u", "postgres", "--", bin, ...args], { encoding: "utf8" }) : spawnSync(bin, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
};

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** The cluster's `postgres` database, as the `postgres` superuser (trust auth on loopback). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDir() {
    return path.join(this.dir, "data");
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = binDir();
    const dir = mkdtempSync(path.join(tmpdir(), "mesh-private-pg-"));
    chmodSync(dir, 0o777);
    if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir]);
    const pg = new PrivatePostgres(dir, await freePort(), bin);
    asPostgres(path.join(bin, "initdb"), ["-D", pg.dataDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    pg.start();
    return pg;
  }

  /** Starts the server (again), waiting until it accepts connections. */
  start(): void {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off -c max_connections=200`;
    asPostgres(path.join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-o", options, "-l", path.join(this.dir, "server.log"), "-w", "-t", "30", "start"]);
  }

  /** Stops the server. `fast` ends sessions and shuts down cleanly; `immediate` is a crash (recovery at next start). */
  stop(mode: "fast" | "immediate" = "fast"): void {
    asPostgres(path.join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-m", mode, "-w", "-t", "30", "stop"]);
  }

  /** The postmaster's PID, or undefined when it is not running. */
  pid(): number | undefined {
    const file = path.join(this.dataDir, "postmaster.pid");
    if (!existsSync(file)) return undefined;
    return Number(readFileSync(file, "utf8").split("\n")[0]);
  }

  running(): boolean {
    const pid = this.pid();
    if (!pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** The server's log so far, for a failing test's message. */
  log(): string {
    const file = path.join(this.dir, "server.log");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  /** Stops the server if it runs and removes the cluster. */
  async dispose(): Promise<void> {
    if (this.running()) {
      try {
        this.stop("immediate");
      } catch {
        const pid = this.pid();
        if (pid) process.kill(pid, "SIGKILL");
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
