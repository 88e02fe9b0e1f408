// A database that cannot answer is a 503 with Retry-After and a plain message, never SQL; a query
// that is wrong is still a 500. The errors are the real driver's (through drizzle), not made up.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { TRPCError } from "@trpc/server";
import { createDb, type Database } from "@mesh/db";
import { createPostgresDatabase } from "@mesh/db/testing";
import { asMeshError, DATABASE_RETRY_AFTER_SECONDS, MeshError, toTrpcError } from "./errors";
import { jsonError } from "./http/json-body";
import { createLogger } from "./log";

const log = createLogger("test");
const SQL_TEXT = /select|Failed query|params:/i;

/** The error a query through drizzle rejects with. */
async function failure(database: Database, query = sql`select 1`): Promise<unknown> {
  try {
    await database.db.execute(query);
  } catch (err) {
    return err;
  } finally {
    await database.close().catch(() => {});
  }
  throw new Error("the query did not fail");
}

async function expectUnavailable(err: unknown) {
  const mesh = asMeshError(err);
  expect(mesh?.code).toBe("DATABASE_UNAVAILABLE");
  expect(mesh?.status).toBe(503);
  expect(mesh?.message).not.toMatch(SQL_TEXT);

  const trpc = toTrpcError(err);
  expect(trpc).toBeInstanceOf(TRPCError);
  expect((trpc as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
  expect((trpc as TRPCError).message).not.toMatch(SQL_TEXT);

  const res = jsonError({ log }, err);
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  const body = await res.text();
  expect(body).toMatch(/database/);
  expect(body).not.toMatch(SQL_TEXT);
}

describe("errors of a database that cannot answer", () => {
  let silent: net.Server;
  let closedPort: number;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    // A server that accepts and never answers: what a blackholed database looks like while connecting.
    silent = net.createServer((s) => sockets.add(s.on("error", () => {})));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  it("connection refused is a 503", async () => {
    await expectUnavailable(await failure(await createDb({ url: `postgres://x@127.0.0.1:${closedPort}/x` })));
  });

  it("no answer to the start-up within the connect timeout is a 503", async () => {
    const port = (silent.address() as net.AddressInfo).port;
    await expectUnavailable(await failure(await createDb({ url: `postgres://x@127.0.0.1:${port}/x`, deadlines: { connectTimeoutMs: 200 } })));
  });

  it.runIf(process.env.DATABASE_URL)("a statement past the statement timeout is a 503; a wrong query is a 500 with its SQL kept out", async () => {
    const pg = await createPostgresDatabase();
    try {
      await expectUnavailable(
        await failure(await createDb({ url: pg.url, maxConnections: 1, deadlines: { statementTimeoutMs: 100 } }), sql`select pg_sleep(2)`),
      );
      const wrong = await failure(await createDb({ url: pg.url, maxConnections: 1 }), sql`select * from no_such_table`);
      expect(asMeshError(wrong)).toBeNull();
      const res = jsonError({ log }, wrong);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toMatch(SQL_TEXT);
    } finally {
      await pg.drop();
    }
  });

  it("a MeshError stays itself, with its own status and no Retry-After unless it has one", () => {
    const conflict = new MeshError("CONFLICT", "taken");
    expect(asMeshError(conflict)).toBe(conflict);
    expect(jsonError({ log }, conflict).headers.get("retry-after")).toBeNull();
    expect(asMeshError(new Error("something else"))).toBeNull();
  });
});
