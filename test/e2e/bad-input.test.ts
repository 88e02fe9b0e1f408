// Bad input gets a clear error and changes nothing: one test per class.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { AUTH_HEADER } from "@mesh/protocol";
import { ControlPlane, engines } from "../harness/control-plane";
import { api, ApiError } from "../harness/api";
import { authHeader, connectFake, enrolFake, enrolRaw, inventory, keyPair, nextClose, openLink, profile } from "../harness/link";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;

describe(`bad input (${engine})`, () => {
  let cp: ControlPlane;
  const client = () => api(cp.url);
  const nodeCount = async () => (await client().query("node.list")).total as number;

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine, env: { MESH_ENROL_LIMIT_PER_TOKEN: "6" } });
  });
  afterAll(() => cp?.dispose());

  describe("enrolment tokens", () => {
    const enrolWith = (token: string) => {
      const { publicKey } = keyPair();
      return enrolRaw(cp.url, { token, publicKey, profile: profile("m".repeat(32)), inventory });
    };

    it("refuses a used token with 401 and a reason, and creates no node", async () => {
      const { token } = await client().mutate("token.create", {});
      expect((await enrolWith(token)).status).toBe(201);
      const before = await nodeCount();
      const r = await enrolWith(token);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: "TOKEN_USED", message: expect.stringMatching(/already been used/) });
      expect(await nodeCount()).toBe(before);
    });

    // Expired by moving its expiry into the past in the database (as time passing would), not by waiting:
    // so on Postgres only. Every engine covers expiry on an injected clock (packages/api enrol-limits.test.ts).
    it.skipIf(engine !== "postgres")("refuses an expired token", async () => {
      const { id, token } = await client().mutate("token.create", {});
      const sql = postgres(cp.databaseUrl!, { max: 1, onnotice: () => {} });
      try {
        await sql`update enrolment_tokens set expires_at = now() - interval '1 second' where id = ${id}`;
      } finally {
        await sql.end();
      }
      const before = await nodeCount();
      const r = await enrolWith(token);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("TOKEN_EXPIRED");
      expect(await nodeCount()).toBe(before);
    });

    it("refuses a malformed token", async () => {
      const r = await enrolWith("not-a-token");
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("TOKEN_MALFORMED");
    });

    it("refuses an unknown token, and a known id with a wrong secret, alike", async () => {
      const unknown = await enrolWith("abcdef.0123456789abcdef01234567".slice(0, 31));
      expect(unknown.status).toBe(401);
      expect(unknown.body.error).toBe("TOKEN_UNKNOWN");
      const { token } = await client().mutate("token.create", {});
      const wrongSecret = await enrolWith(`${token.split(".")[0]}.${"x".repeat(24)}`);
      expect(wrongSecret.status).toBe(401);
      expect(wrongSecret.body.error).toBe("TOKEN_UNKNOWN");
      // the real token still works: a wrong secret does not burn it
      expect((await enrolWith(token)).status).toBe(201);
    });

    it("backs off failed enrolment attempts per token id and address, with a reason", async () => {
      const guess = "zzzzzz.0123456789abcdefghijklmn";
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await enrolWith(guess)).status);
      expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
      const last = await enrolWith(guess);
      expect(last.status).toBe(429);
      expect(last.body.message).toMatch(/too many enrolment attempts with this token/);
    });

    it("refuses a body that does not parse, naming the field", async () => {
      const { token } = await client().mutate("token.create", {});
      const before = await nodeCount();
      const missing = await enrolRaw(cp.url, { token, publicKey: keyPair().publicKey, inventory });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toMatch(/profile/);
      expect((await enrolRaw(cp.url, "{not json")).status).toBe(400);
      expect((await enrolRaw(cp.url, JSON.stringify({ token }), "text/plain")).status).toBe(415);
      expect(await nodeCount()).toBe(before);
      // none of that consumed the token
      expect((await enrolWith(token)).status).toBe(201);
    });
  });

  describe("the agent link", () => {
    it("refuses an unauthenticated upgrade with 401 and no connection", async () => {
      await expect(openLink(cp.url, {})).rejects.toMatchObject({ status: 401 });
      await expect(openLink(cp.url, { [AUTH_HEADER]: "garbage" })).rejects.toMatchObject({ status: 401 });
    });

    it("refuses a signature by another key, and a replayed challenge", async () => {
      const { token } = await client().mutate("token.create", {});
      const host = await enrolFake(cp.url, token);
      const impostor = { ...host, ...keyPair() };
      await expect(connectFake(cp.url, impostor)).rejects.toMatchObject({ status: 401 });
      const header = await authHeader(cp.url, host);
      const ws = await openLink(cp.url, { [AUTH_HEADER]: header });
      await expect(openLink(cp.url, { [AUTH_HEADER]: header })).rejects.toMatchObject({ status: 401 });
      ws.close();
    });

    it("closes the link with 4400 and logs a line on a frame that does not parse", async () => {
      const { token } = await client().mutate("token.create", {});
      const host = await enrolFake(cp.url, token);
      const ws = await connectFake(cp.url, host);
      const closed = nextClose(ws);
      ws.send(JSON.stringify({ type: "report", seq: 1, report: { owned: "lots" } }));
      expect((await closed).code).toBe(4400);
      await waitFor("log line", () => cp.output.includes("bad frame from host"));
    });

    it("closes the link with 1009 on an oversized frame", async () => {
      const { token } = await client().mutate("token.create", {});
      const host = await enrolFake(cp.url, token);
      const ws = await connectFake(cp.url, host);
      const closed = nextClose(ws);
      ws.send("x".repeat(2 * 1024 * 1024));
      expect((await closed).code).toBe(1009);
    });
  });

  describe("roles", () => {
    const expectRefused = async (role: unknown, field: RegExp) => {
      const err = await client()
        .mutate("role.upsert", role)
        .catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(400);
      const issues = err.body.error.data.zodIssues as Array<{ path: string }>;
      expect(issues.map((i) => i.path).join(",")).toMatch(field);
      expect(await client().query("role.list")).toEqual([]);
    };

    it("refuses an unknown resource type, naming the field, and stores nothing", () =>
      expectRefused({ name: "bad", resources: [{ type: "teapot", id: "t", path: "/t" }] }, /resources\.0\.type/));

    it("refuses a bad path, naming the field, and stores nothing", () =>
      expectRefused({ name: "bad", resources: [{ type: "file", id: "f", path: "/etc/../shadow", content: "" }] }, /resources\.0\.path/));

    it("refuses a relative path", () => expectRefused({ name: "bad", resources: [{ type: "directory", id: "d", path: "srv" }] }, /resources\.0\.path/));
  });
});
