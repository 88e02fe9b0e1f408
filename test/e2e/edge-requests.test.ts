// The control plane's HTTP edge holds against a caller with no credentials, a token
// holder and a host (issue 10, items 7, 13, 14, 17, 19, 20): bounded bodies, Origin on
// login and logout, security headers, nothing from a header unquoted in a script or
// command, a host reads only its own files, no internal error text and no NUL reaches anyone.
import { createHash, sign } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SIGNATURE_HEADERS, httpSignatureMessage } from "@mesh/protocol";
import { ADMIN_API_KEY, ADMIN_PASSWORD, ControlPlane, engines } from "../harness/control-plane";
import { api, ApiError } from "../harness/api";
import { connectFake, enrolFake, enrolRaw, inventory, keyPair, nextClose, profile, type FakeHost } from "../harness/link";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const HOST_VERSION = (JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../apps/agent/package.json"), "utf8")) as { version: string }).version;

/** A raw HTTP request (Node's client lets us set Host and stream a body); resolves at the response. */
function rawRequest(
  base: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; streamBytes?: number; localAddress?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; sentBytes: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const req = http.request(
      {
        agent: false,
        host: url.hostname,
        port: url.port,
        method: opts.method ?? "GET",
        path: opts.path,
        headers: opts.headers,
        localAddress: opts.localAddress,
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          resolve({ status: res.statusCode!, headers: res.headers, text, sentBytes });
          req.destroy();
        });
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (answered) return;
      // The server answered and closed while we were still sending: the kernel may reset the
      // connection before its answer is read. For a streamed body that is a refusal too.
      if (opts.streamBytes && (err.code === "EPIPE" || err.code === "ECONNRESET")) resolve({ status: 0, headers: {}, text: "", sentBytes });
      else reject(err);
    });
    if (opts.streamBytes) {
      // Streams (chunked, no Content-Length) until the server answers or the total is sent.
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (!answered && sentBytes < opts.streamBytes!) {
          sentBytes += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        if (!answered) req.end();
      };
      pump();
    } else {
      req.end(opts.body);
    }
  });
}

function signedGet(base: string, host: FakeHost, pathname: string) {
  const time = new Date().toISOString();
  const empty = createHash("sha256").digest("hex");
  const signature = sign(null, Buffer.from(httpSignatureMessage("GET", pathname, time, empty)), host.privateKey).toString("base64");
  return fetch(`${base}${pathname}`, {
    headers: { [HTTP_SIGNATURE_HEADERS.node]: host.nodeId, [HTTP_SIGNATURE_HEADERS.time]: time, [HTTP_SIGNATURE_HEADERS.signature]: signature },
  });
}

async function upload(base: string, data: Buffer): Promise<{ sha256: string; url: string }> {
  const res = await fetch(`${base}/api/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(data),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { sha256: string; url: string };
}

/** What sh makes of a command line we print: its words, one per line. */
function wordsOf(command: string): string[] {
  return execFileSync("sh", ["-c", `printf '%s\\n' ${command}`], { encoding: "utf8" })
    .split("\n")
    .slice(0, -1);
}

/** The printed enrol command's two halves: the words feeding the token on stdin, and the enrol command's words. */
function enrolWordsOf(command: string): { feed: string[]; enrol: string[] } {
  const bar = command.indexOf(" | ");
  return { feed: wordsOf(command.slice(0, bar)), enrol: wordsOf(command.slice(bar + 3)) };
}

function artifactsDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-edge-artifacts-"));
  fs.writeFileSync(path.join(dir, `mesh-host-${HOST_VERSION}-linux-x86_64.tar.gz`), "not really a tarball");
  return dir;
}

describe(`the HTTP edge (${engine})`, () => {
  let cp: ControlPlane;
  let artifacts: string;
  let secretDir: string;

  beforeAll(async () => {
    artifacts = artifactsDir();
    secretDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-edge-secret-"));
    fs.writeFileSync(path.join(secretDir, "secret"), "0".repeat(64));
    cp = await ControlPlane.start({
      engine,
      env: { MESH_ARTIFACTS_DIR: artifacts, MESH_BOOTSTRAP_SECRET_FILE: path.join(secretDir, "secret"), MESH_TRUSTED_PROXIES: "127.0.0.2" },
    });
  });
  afterAll(async () => {
    await cp?.dispose();
    fs.rmSync(artifacts, { recursive: true, force: true });
    fs.rmSync(secretDir, { recursive: true, force: true });
  });

  describe("every body is bounded before it is read (item 7)", () => {
    const json = { "content-type": "application/json" };
    const MiB = 1024 * 1024;
    // [name, path, headers, a declared length just over that entry point's limit]
    const entryPoints: Array<[string, string, Record<string, string>, number]> = [
      ["login (JSON)", "/api/auth/login", json, MiB],
      ["login (form)", "/api/auth/login", { "content-type": "application/x-www-form-urlencoded" }, MiB],
      ["logout", "/api/auth/logout", { "content-type": "application/x-www-form-urlencoded" }, MiB],
      ["enrol", "/api/enrol", json, 3 * MiB],
      ["files upload", "/api/files", { "content-type": "application/octet-stream", authorization: `Bearer ${ADMIN_API_KEY}` }, 65 * MiB],
      ["bootstrap token", "/api/bootstrap/token", json, 3 * MiB],
      ["tRPC", "/api/trpc/role.upsert", { ...json, authorization: `Bearer ${ADMIN_API_KEY}` }, 9 * MiB],
    ];

    it.each(entryPoints)("%s: a streamed body over the limit gets 413 and is not read to its end", async (_name, pathname, headers) => {
      const before = cp.rssKb();
      const total = 400 * 1024 * 1024;
      const r = await rawRequest(cp.url, { method: "POST", path: pathname, headers, streamBytes: total });
      // 413, or (when the reset beats the answer to us) a connection the server closed mid-body.
      if (r.status !== 0) {
        expect(r.status).toBe(413);
        expect(r.text).toMatch(/over \d+ bytes/);
      }
      expect(r.sentBytes).toBeLessThan(total);
      // Only what one limit allows was held (64 MiB for uploads); 400 MiB would show.
      expect(cp.rssKb() - before).toBeLessThan(256 * 1024);
    });

    it.each(entryPoints)("%s: a declared Content-Length over the limit gets 413 before any byte is read", async (_name, pathname, headers, declared) => {
      const r = await rawRequest(cp.url, {
        method: "POST",
        path: pathname,
        headers: { ...headers, "content-length": String(declared) },
        body: Buffer.alloc(0),
      }).catch(() => null);
      // The server answers without waiting for the gigabyte it was promised.
      expect(r?.status).toBe(413);
    });

    it("still takes bodies within the limits", async () => {
      // Near a limit, not far under it: a 60 MiB upload (limit 64 MiB) is read whole and stored.
      expect((await upload(cp.url, Buffer.alloc(60 * MiB, 1))).sha256).toMatch(/^[0-9a-f]{64}$/);
      await api(cp.url).mutate("role.upsert", { name: "bounded", resources: [] });
      await api(cp.url).mutate("role.delete", { name: "bounded" });
    });
  });

  describe("login and logout check the Origin (item 13)", () => {
    const form = (extra: Record<string, string>) => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...extra },
      body: new URLSearchParams({ name: "admin", password: ADMIN_PASSWORD }).toString(),
      redirect: "manual" as const,
    });

    it("refuses a cross-origin login form post, and sets no cookie", async () => {
      const res = await fetch(`${cp.url}/api/auth/login`, form({ origin: "http://evil.example" }));
      expect(res.status).toBe(403);
      expect(res.headers.get("set-cookie")).toBeNull();
      const nullOrigin = await fetch(`${cp.url}/api/auth/login`, form({ origin: "null" }));
      expect(nullOrigin.status).toBe(403);
      const crossSite = await fetch(`${cp.url}/api/auth/login`, form({ "sec-fetch-site": "cross-site" }));
      expect(crossSite.status).toBe(403);
    });

    it("takes a login from our own origin, and from a script that sends no Origin", async () => {
      const ours = await fetch(`${cp.url}/api/auth/login`, form({ origin: cp.url }));
      expect(ours.status).toBe(303);
      expect(ours.headers.get("set-cookie")).toMatch(/^mesh_session=/);
      const script = await fetch(`${cp.url}/api/auth/login`, form({}));
      expect(script.status).toBe(303);
    });

    it("refuses a cross-origin logout, which leaves the session working", async () => {
      const cookie = (await fetch(`${cp.url}/api/auth/login`, form({ origin: cp.url }))).headers.get("set-cookie")!.split(";")[0]!;
      const res = await fetch(`${cp.url}/api/auth/logout`, { method: "POST", headers: { cookie, origin: "http://evil.example" }, redirect: "manual" });
      expect(res.status).toBe(403);
      const me = await fetch(`${cp.url}/api/trpc/user.me`, { headers: { cookie } });
      expect(me.status).toBe(200);
      const ours = await fetch(`${cp.url}/api/auth/logout`, { method: "POST", headers: { cookie, origin: cp.url }, redirect: "manual" });
      expect(ours.status).toBe(303);
      expect((await fetch(`${cp.url}/api/trpc/user.me`, { headers: { cookie } })).status).toBe(401);
    });

    it("refuses a cross-origin file upload made with a session cookie (a sibling: every mutation checks the Origin)", async () => {
      const cookie = (await fetch(`${cp.url}/api/auth/login`, form({ origin: cp.url }))).headers.get("set-cookie")!.split(";")[0]!;
      const upload = (origin?: string) =>
        fetch(`${cp.url}/api/files`, {
          method: "POST",
          headers: { cookie, "content-type": "application/octet-stream", ...(origin ? { origin } : {}) },
          body: "x",
        });
      expect((await upload("http://evil.example")).status).toBe(403);
      expect((await upload()).status).toBe(403);
      expect((await upload(cp.url)).status).toBe(201);
    });
  });

  describe("security headers (item 14)", () => {
    const expectHeaders = (headers: Headers, what: string) => {
      const csp = headers.get("content-security-policy") ?? "";
      expect(csp, what).toMatch(/frame-ancestors 'none'/);
      expect(csp, what).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
      expect(csp, what).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      expect(headers.get("x-frame-options"), what).toBe("DENY");
      expect(headers.get("x-content-type-options"), what).toBe("nosniff");
      expect(headers.get("referrer-policy"), what).toBe("same-origin");
      // Plain http with no https public URL: no HSTS.
      expect(headers.get("strict-transport-security"), what).toBeNull();
    };

    it("are on a page, an API response, the enrol route, a 404, a download and a file", async () => {
      const page = await fetch(`${cp.url}/login`);
      expectHeaders(page.headers, "page");
      // Next puts the response's nonce on every script it renders.
      const nonce = /'nonce-([^']+)'/.exec(page.headers.get("content-security-policy")!)![1]!;
      const scripts = [...(await page.text()).matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
      expectHeaders((await fetch(`${cp.url}/api/trpc/node.list`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } })).headers, "api");
      expectHeaders((await fetch(`${cp.url}/api/enrol`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).headers, "enrol");
      const missing = await fetch(`${cp.url}/no-such-page`);
      expect(missing.status).toBe(404);
      expectHeaders(missing.headers, "404");
      expectHeaders((await fetch(`${cp.url}/download/install.sh`)).headers, "download");
      const artifact = await fetch(`${cp.url}/download/mesh-host-${HOST_VERSION}-linux-x86_64.tar.gz`);
      expectHeaders(artifact.headers, "artifact");
      expect(await artifact.text()).toBe("not really a tarball");
      const { url } = await upload(cp.url, Buffer.from("headers"));
      expectHeaders((await fetch(`${cp.url}${url}`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } })).headers, "file");
      expectHeaders((await fetch(`${cp.url}/api/agent/challenge`)).headers, "challenge");
    });
  });

  describe("nothing from a request header goes unquoted into a script or command (item 17)", () => {
    it("refuses a Host that is not hostname[:port]", async () => {
      for (const host of [`evil.example";touch /tmp/pwned;"`, "evil.example/path", "$(id)", "a b"]) {
        const r = await rawRequest(cp.url, { path: "/download/install.sh", headers: { host } });
        expect(r.status, host).toBe(400);
        expect(r.text).not.toContain("touch");
      }
    });

    it("ignores X-Forwarded-Host and -Proto from a peer that is not a trusted proxy", async () => {
      const headers = { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" };
      const script = await rawRequest(cp.url, { path: "/download/install.sh", headers });
      expect(script.status).toBe(200);
      expect(script.text).not.toContain("evil.example");
      expect(script.text).toContain(`public_url=${cp.url}\n`);
      expect(script.headers["strict-transport-security"]).toBeUndefined();
      const created = await fetch(`${cp.url}/api/trpc/token.create`, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${ADMIN_API_KEY}`, "content-type": "application/json" },
        body: "{}",
      });
      const { command, installCommand } = ((await created.json()) as any).result.data;
      expect(command).not.toContain("evil.example");
      expect(installCommand).not.toContain("evil.example");
      expect(enrolWordsOf(command)).toEqual({
        feed: ["printf", "%s\\n", expect.stringMatching(/^[a-z0-9]{6}\.[a-z0-9]{24}$/)],
        enrol: ["mesh-host", "enrol", cp.url, "--token", "-", "--insecure"],
      });
    });

    it("believes X-Forwarded-Host from a trusted proxy (MESH_TRUSTED_PROXIES), validated like a Host", async () => {
      const viaProxy = await rawRequest(cp.url, {
        path: "/download/install.sh",
        localAddress: "127.0.0.2",
        headers: { "x-forwarded-host": "mesh.example:8443", "x-forwarded-proto": "https" },
      });
      expect(viaProxy.text).toContain("public_url=https://mesh.example:8443\n");
      // The proxy terminated TLS: HSTS follows the validated origin's scheme, like the Secure cookie (review 12).
      expect(viaProxy.headers["strict-transport-security"]).toMatch(/max-age=\d+/);
      const plainViaProxy = await rawRequest(cp.url, {
        path: "/login",
        localAddress: "127.0.0.2",
        headers: { "x-forwarded-host": "mesh.example:8443", "x-forwarded-proto": "http" },
      });
      expect(plainViaProxy.headers["strict-transport-security"]).toBeUndefined();
      const bad = await rawRequest(cp.url, { path: "/download/install.sh", localAddress: "127.0.0.2", headers: { "x-forwarded-host": "x';id;'" } });
      expect(bad.status).toBe(400);
    });
  });

  describe("a node downloads only files its own declaration names (item 19)", () => {
    it("refuses node A a file only node B's declaration names; B and the admin read it", async () => {
      const secret = await upload(cp.url, Buffer.from(`only for b ${Date.now()}`));
      const a = await enrolFake(cp.url, (await api(cp.url).mutate("token.create", { labels: { team: "a" } })).token);
      const b = await enrolFake(cp.url, (await api(cp.url).mutate("token.create", { labels: { team: "b" } })).token);
      await api(cp.url).mutate("role.upsert", {
        name: "team-b-secret",
        selector: { labels: { team: "b" } },
        resources: [{ type: "file", id: "secret", path: "/etc/b-secret", source: { url: secret.url, sha256: secret.sha256 }, mode: "0600" }],
      });
      await waitFor("b's declaration to name the file", async () =>
        JSON.stringify((await api(cp.url).query("node.get", { id: b.nodeId })).declaration ?? {}).includes(secret.sha256),
      );
      const refused = await signedGet(cp.url, a, secret.url);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as any).message).toMatch(/not a source in your node's declaration/);
      const served = await signedGet(cp.url, b, secret.url);
      expect(served.status).toBe(200);
      expect((await fetch(`${cp.url}${secret.url}`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } })).status).toBe(200);
      await api(cp.url).mutate("role.delete", { name: "team-b-secret" });
    });
  });

  describe("internal errors and NUL bytes (item 20)", () => {
    const expectRefusedNaming = async (call: Promise<unknown>, field: string) => {
      const err = (await call.catch((e) => e)) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(400);
      expect(err.body.error.message).toContain(`${field}: contains a NUL character`);
    };

    it("refuses a NUL in a role name and in a label, naming the field, with no 500", async () => {
      await expectRefusedNaming(api(cp.url).mutate("role.upsert", { name: "we\u0000b", resources: [] }), "name");
      await expectRefusedNaming(api(cp.url).mutate("token.create", { labels: { tier: "w\u0000eb" } }), "labels.tier");
      // A lone surrogate is text Postgres cannot store either (it was a 500).
      const err = await api(cp.url)
        .mutate("token.create", { labels: { tier: "w\ud800" } })
        .catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.body.error.message).toMatch(/labels\.tier: is not valid Unicode/);
      expect(cp.output).not.toMatch(/tRPC procedure failed/);
    });

    it("refuses a NUL in an enrolment's profile, naming the field, and uses no token", async () => {
      const { token } = await api(cp.url).mutate("token.create", {});
      const r = await enrolRaw(cp.url, {
        token,
        publicKey: keyPair().publicKey,
        profile: { ...profile("n".repeat(32)), hostname: "evil\u0000host" },
        inventory,
      });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: "BAD_INPUT", message: expect.stringContaining("profile.hostname: contains a NUL character") });
      expect((await enrolRaw(cp.url, { token, publicKey: keyPair().publicKey, profile: profile("n".repeat(32)), inventory })).status).toBe(201);
    });

    it("closes a host link whose frame holds a NUL (4400, the field named), with no internal error", async () => {
      const host = await enrolFake(cp.url, (await api(cp.url).mutate("token.create", {})).token);
      const ws = await connectFake(cp.url, host);
      const closed = nextClose(ws);
      ws.send(JSON.stringify({ type: "facts", profile: { ...profile("f".repeat(32)), hostname: "a\u0000b" }, inventory }));
      const { code, reason } = await closed;
      expect(code).toBe(4400);
      expect(reason).toMatch(/profile\.hostname: contains a NUL/);
      expect(cp.output).not.toMatch(/link handler failed/);
    });

    it.skipIf(engine !== "postgres")("answers a forced internal error with a generic message and an id that is in the log", async () => {
      const sql = postgres(cp.databaseUrl!, { max: 1, onnotice: () => {} });
      try {
        await sql`ALTER TABLE events RENAME TO events_hidden_by_test`;
        const err = (await api(cp.url)
          .query("event.list")
          .catch((e) => e)) as ApiError;
        expect(err.status).toBe(500);
        const message = err.body.error.message as string;
        const id = /internal error \(id ([0-9a-f]{12})\)/.exec(message)?.[1];
        expect(id, message).toBeTruthy();
        expect(message).not.toMatch(/events|relation|select|postgres/i);
        expect(JSON.stringify(err.body)).not.toMatch(/events_hidden|relation|stack/i);
        await waitFor("the log line with the id", () => cp.output.split("\n").find((l) => l.includes(`"errorId":"${id}"`) && /does not exist/.test(l)));
      } finally {
        await sql`ALTER TABLE events_hidden_by_test RENAME TO events`.catch(() => {});
        await sql.end();
      }
    });
  });
});

describe(`behind a TLS-terminating proxy: MESH_PUBLIC_URL is https (${engine})`, () => {
  let cp: ControlPlane;
  let artifacts: string;
  const publicUrl = `https://mesh.example/o'brien"$(touch /tmp/mesh-pwned)`;

  beforeAll(async () => {
    artifacts = artifactsDir();
    cp = await ControlPlane.start({ engine, env: { MESH_PUBLIC_URL: publicUrl, MESH_ARTIFACTS_DIR: artifacts } });
  });
  afterAll(async () => {
    await cp?.dispose();
    fs.rmSync(artifacts, { recursive: true, force: true });
  });

  it("sends HSTS and marks the session cookie Secure", async () => {
    const res = await fetch(`${cp.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "admin", password: ADMIN_PASSWORD }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/; Secure/);
    expect(res.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
    expect((await fetch(`${cp.url}/login`)).headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
  });

  it("quotes a public URL with quotes and $(...) safely in install.sh and in the printed commands", async () => {
    const script = await (await fetch(`${cp.url}/download/install.sh`)).text();
    const assignment = script.split("\n").find((l) => l.startsWith("public_url="))!;
    // The script's own assignment, run by sh, yields exactly the URL, and runs nothing.
    expect(execFileSync("sh", ["-c", `${assignment}\nprintf %s "$public_url"`], { encoding: "utf8" })).toBe(publicUrl);
    expect(fs.existsSync("/tmp/mesh-pwned")).toBe(false);
    const { command, installCommand } = await api(cp.url).mutate("token.create", {});
    expect(enrolWordsOf(command)).toEqual({
      feed: ["printf", "%s\\n", expect.stringMatching(/^[a-z0-9]{6}\.[a-z0-9]{24}$/)],
      enrol: ["mesh-host", "enrol", publicUrl, "--token", "-", "--insecure"],
    });
    expect(wordsOf(installCommand.replace(/ \| sh$/, ""))).toEqual(["curl", "-fsSL", `${publicUrl}/download/install.sh`]);
    expect(fs.existsSync("/tmp/mesh-pwned")).toBe(false);
  });
});
