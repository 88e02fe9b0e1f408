// The Postgres grant provider: a LOGIN role per node and grant on a configured
// target database with exactly the declared access (re-issuing first revokes whatever the role held);
// passwords are sent as SCRAM verifiers; revoke refuses new logins, ends the role's sessions and drops it.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { postgresDeadlineOptions, resolveDeadlines, type DatabaseDeadlines } from "@mesh/db";
import type { GrantDeclaration, GrantProvider } from "./provider";
import { scramVerifier } from "./scram-verifier";

const PRINCIPAL = /^mesh_[a-z0-9_]{1,50}$/;

/** Quotes an identifier read from the catalog (schema names there are not limited to what a grant may name). */
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Revokes every privilege the role holds in this database: on tables, sequences and functions in every
 * schema where it holds any, and on those schemas themselves (found in the catalog's ACLs, so a
 * schema granted by an older spec is covered too; a table's REVOKE ALL also revokes its column grants).
 * CONNECT is granted again by issue.
 */
async function revokePrivileges(tx: postgres.TransactionSql, principal: string): Promise<void> {
  const schemas = await tx<{ nspname: string }[]>`
    with r as (select oid from pg_roles where rolname = ${principal})
    select n.nspname from pg_namespace n, r
     where exists (select 1 from aclexplode(n.nspacl) a where a.grantee = r.oid)
    union
    select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace, r
     where exists (select 1 from aclexplode(c.relacl) a where a.grantee = r.oid)
    union
    select n.nspname from pg_attribute t join pg_class c on c.oid = t.attrelid join pg_namespace n on n.oid = c.relnamespace, r
     where t.attacl is not null and exists (select 1 from aclexplode(t.attacl) a where a.grantee = r.oid)
    union
    select n.nspname from pg_proc p join pg_namespace n on n.oid = p.pronamespace, r
     where exists (select 1 from aclexplode(p.proacl) a where a.grantee = r.oid)`;
  for (const { nspname } of schemas) {
    const schema = ident(nspname);
    await tx.unsafe(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${principal}`);
    await tx.unsafe(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schema} FROM ${principal}`);
    await tx.unsafe(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${schema} FROM ${principal}`);
    await tx.unsafe(`REVOKE ALL ON SCHEMA ${schema} FROM ${principal}`);
  }
}

export function createPostgresGrantProvider(
  adminUrl: string,
  opts: { publicUrl?: string; deadlines?: Partial<DatabaseDeadlines> } = {},
): GrantProvider & { close(): Promise<void> } {
  // The control plane's own deadlines: a settler must not wait forever on an unreachable target either.
  const sql = postgres(adminUrl, { max: 2, onnotice: () => {}, ...postgresDeadlineOptions(adminUrl, resolveDeadlines(opts.deadlines)) });
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
      // Only the verifier is sent: Postgres stores a SCRAM verifier as given, so the clear password
      // never appears in a statement the grant database may log (log_statement, pg_stat_statements).
      const verifier = scramVerifier(password);
      if (!/^SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/.test(verifier)) throw new Error("unexpected verifier");
      await sql.begin(async (tx) => {
        const [exists] = await tx`select 1 from pg_roles where rolname = ${principal}`;
        // A password cannot be a bind parameter in CREATE/ALTER ROLE; the verifier is base64 and '$:' only.
        if (exists) {
          await tx.unsafe(`ALTER ROLE ${principal} LOGIN PASSWORD '${verifier}'`);
          // A re-issue grants exactly the new spec: whatever the role held before (another schema,
          // readwrite narrowed to read) is revoked first, in the same transaction.
          await revokePrivileges(tx, principal);
        } else await tx.unsafe(`CREATE ROLE ${principal} LOGIN PASSWORD '${verifier}'`);
        await tx.unsafe(`GRANT CONNECT ON DATABASE "${database.replace(/"/g, '""')}" TO ${principal}`);
        await tx.unsafe(`GRANT USAGE ON SCHEMA ${grant.schema} TO ${principal}`);
        await tx.unsafe(`GRANT ${privileges} ON ALL TABLES IN SCHEMA ${grant.schema} TO ${principal}`);
        // Inserting into a serial/identity column needs its sequence.
        if (grant.access === "readwrite") await tx.unsafe(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${grant.schema} TO ${principal}`);
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
