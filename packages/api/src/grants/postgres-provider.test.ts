// The Postgres grant provider against real Postgres: a re-issued grant holds exactly its new spec
// (narrowed access, another schema), and the password is sent as a SCRAM verifier the node still logs in with.
import { createHash, createHmac, pbkdf2Sync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { createPostgresDatabase } from "@mesh/db/testing";
import { createPostgresGrantProvider } from "./postgres-provider";
import { scramVerifier } from "./scram-verifier";

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describe("scramVerifier", () => {
  it("matches RFC 7677's SCRAM-SHA-256 keys for a known salt", () => {
    // RFC 7677 §3: password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations.
    const v = scramVerifier("pencil", Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64"), 4096);
    const [, iterSalt, keys] = v.split("$");
    expect(iterSalt).toBe("4096:W22ZaJ0SNY7soEsUEjb6gQ==");
    // ServerSignature in the RFC is HMAC(ServerKey, AuthMessage); check ServerKey through it.
    const authMessage =
      "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
    const serverKey = Buffer.from(keys!.split(":")[1]!, "base64");
    expect(createHmac("sha256", serverKey).update(authMessage).digest("base64")).toBe("6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  });
});

withPostgres("postgres grant provider", () => {
  let target: { url: string; drop(): Promise<void> };
  let provider: ReturnType<typeof createPostgresGrantProvider>;
  let admin: postgres.Sql;
  const sessions: postgres.Sql[] = [];
  const principal = `mesh_t${Date.now().toString(36)}`;

  const connect = (url: string) => {
    const s = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    sessions.push(s);
    return s;
  };
  const issue = async (access: "read" | "readwrite", schema: string) => {
    const grant = { id: "db", provider: "postgres" as const, path: "/etc/db.env", mode: "0600", access, schema };
    const credential = provider.mint(principal, grant);
    await provider.issue(principal, grant, credential);
    const url = /^DATABASE_URL=(.*)$/m.exec(credential)![1]!;
    return { url, password: decodeURIComponent(new URL(url).password) };
  };

  beforeAll(async () => {
    target = await createPostgresDatabase("mesh_grant_provider");
    admin = postgres(target.url, { max: 1, onnotice: () => {} });
    await admin`create schema shop`;
    await admin`create schema books`;
    await admin`create table shop.orders (id serial primary key, item text)`;
    await admin`create table books.ledger (id int primary key, amount int)`;
    await admin`insert into shop.orders (item) values ('tea')`;
    await admin`insert into books.ledger values (1, 100)`;
    // Anything that stores the clear password would store it as md5 here; a verifier is stored as sent.
    await admin.unsafe(`alter database "${new URL(target.url).pathname.slice(1)}" set password_encryption = 'md5'`);
    provider = createPostgresGrantProvider(target.url);
  });
  afterAll(async () => {
    for (const s of sessions) await s.end({ timeout: 1 }).catch(() => {});
    await provider?.revoke(principal).catch(() => {});
    await provider?.close();
    await admin?.end();
    await target?.drop();
  });

  it("sends a SCRAM verifier, never the clear password, and the node logs in with the clear password", async () => {
    const { url, password } = await issue("read", "shop");
    const [row] = await admin<{ rolpassword: string }[]>`select rolpassword from pg_authid where rolname = ${principal}`;
    expect(row!.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
    expect(row!.rolpassword).not.toContain(password);
    // The stored verifier is the one for this password (the salt is random, so recompute with it).
    const [, iterSalt, keys] = row!.rolpassword.split("$");
    const salted = pbkdf2Sync(password, Buffer.from(iterSalt!.split(":")[1]!, "base64"), 4096, 32, "sha256");
    const storedKey = createHash("sha256").update(createHmac("sha256", salted).update("Client Key").digest()).digest("base64");
    expect(keys!.split(":")[0]).toBe(storedKey);
    expect(await connect(url)`select item from shop.orders`).toEqual([{ item: "tea" }]);
  });

  it("narrowing readwrite to read takes the write privileges away", async () => {
    const rw = await issue("readwrite", "shop");
    await connect(rw.url)`insert into shop.orders (item) values ('cake')`;
    const r = await issue("read", "shop");
    const session = connect(r.url);
    expect((await session`select item from shop.orders order by id`).map((o) => o.item)).toEqual(["tea", "cake"]);
    await expect(session`insert into shop.orders (item) values ('jam')`).rejects.toThrow(/permission denied/);
    await expect(session`delete from shop.orders`).rejects.toThrow(/permission denied/);
  });

  it("moving a grant to another schema takes the old schema away", async () => {
    await issue("readwrite", "shop");
    const moved = await issue("read", "books");
    const session = connect(moved.url);
    expect(await session`select amount from books.ledger`).toEqual([{ amount: 100 }]);
    await expect(session`select item from shop.orders`).rejects.toThrow(/permission denied/);
    const [usage] = await admin<{ usage: boolean }[]>`select has_schema_privilege(${principal}, 'shop', 'USAGE') as usage`;
    expect(usage!.usage).toBe(false);
  });
});
