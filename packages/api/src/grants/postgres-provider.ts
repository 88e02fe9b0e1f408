// The Postgres grant provider: a LOGIN role per node and grant on a configured
// target database, with the declared access; revoke refuses new logins, ends the
// role's sessions and drops it.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import type { GrantDeclaration, GrantProvider } from "./provider";

const PRINCIPAL = /^mesh_[a-z0-9_]{1,50}$/;

export function createPostgresGrantProvider(adminUrl: string, opts: { publicUrl?: string } = {}): GrantProvider & { close(): Promise<void> } {
  const sql = postgres(adminUrl, { max: 2, onnotice: () => {} });
  const target = new URL(opts.publicUrl ?? adminUrl);
  const database = decodeURIComponent(new URL(adminUrl).pathname.slice(1));

  const check = (principal: string) => {
    // Names are made by principalFor; refuse anything else rather than quote it.
    if (!PRINCIPAL.test(principal)) throw new Error(`refusing principal name ${principal}`);
  };

  /** The password inside a credential this provider minted; only base64url, so it can be quoted safely. */
  const passwordOf = (credential: string): string => {
    const m = /^DATABASE_URL=(\S+)$/m.exec(credential);
    const password = m ? decodeURIComponent(new URL(m[1]!).password) : "";
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(password)) throw new Error("the credential does not hold a password this provider made");
    return password;
  };

  return {
    name: "postgres",
    mint(principal: string) {
      check(principal);
      const url = new URL(target.toString());
      url.username = principal;
      url.password = randomBytes(24).toString("base64url");
      url.pathname = `/${database}`;
      return `DATABASE_URL=${url.toString()}\n`;
    },
    async issue(principal: string, grant: GrantDeclaration, credential: string) {
      check(principal);
      const password = passwordOf(credential);
      const privileges = grant.access === "readwrite" ? "SELECT, INSERT, UPDATE, DELETE" : "SELECT";
      await sql.begin(async (tx) => {
        const [exists] = await tx`select 1 from pg_roles where rolname = ${principal}`;
        // A password cannot be a bind parameter in CREATE/ALTER ROLE; it is base64url only.
        if (exists) await tx.unsafe(`ALTER ROLE ${principal} LOGIN PASSWORD '${password}'`);
        else await tx.unsafe(`CREATE ROLE ${principal} LOGIN PASSWORD '${password}'`);
        await tx.unsafe(`GRANT CONNECT ON DATABASE "${database.replace(/"/g, '""')}" TO ${principal}`);
        await tx.unsafe(`GRANT USAGE ON SCHEMA ${grant.schema} TO ${principal}`);
        await tx.unsafe(`GRANT ${privileges} ON ALL TABLES IN SCHEMA ${grant.schema} TO ${principal}`);
      });
    },
    async revoke(principal: string) {
      check(principal);
      const [exists] = await sql`select 1 from pg_roles where rolname = ${principal}`;
      if (!exists) return;
      await sql.unsafe(`ALTER ROLE ${principal} NOLOGIN`);
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where usename = ${principal}`;
      await sql.unsafe(`DROP OWNED BY ${principal}`);
      await sql.unsafe(`DROP ROLE ${principal}`);
    },
    async list() {
      const rows = await sql<{ rolname: string }[]>`select rolname from pg_roles where rolname like 'mesh\\_%'`;
      return rows.map((r) => r.rolname);
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
