// A URL that is not a Mesh control plane, in words: what the enrol and link paths say for a bare
// 404, an HTML page, https against plain http, nothing listening and an unknown host.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { LinkRefused, fetchChallenge } from "./auth";
import { describeReachFailure, notMeshAnswer } from "./not-mesh";

describe("not a Mesh control plane", () => {
  it("a bare 404 or an HTML page is not the control plane; its own JSON errors are", () => {
    expect(notMeshAnswer("http://x", "/api/enrol", 404, "Not Found")).toMatch(
      /^http:\/\/x does not look like a Mesh control plane: \/api\/enrol answered HTTP 404\. Check the URL/,
    );
    expect(notMeshAnswer("http://x", "/api/enrol", 404, "<!DOCTYPE html><p>nope")).toMatch(/answered HTTP 404 with an HTML page/);
    expect(notMeshAnswer("http://x", "/api/enrol", 200, "<html></html>", "text/html")).toMatch(/answered with an HTML page, not JSON/);
    expect(notMeshAnswer("http://x", "/api/enrol", 404, JSON.stringify({ error: "not_found", message: "no such node" }))).toBeNull();
    expect(notMeshAnswer("http://x", "/api/enrol", 401, "whatever")).toBeNull();
  });

  it("says why a URL cannot be reached in words", () => {
    const err = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(describeReachFailure("https://h:1", err("EPROTO", "write EPROTO 80:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../x\n"))).toBe(
      "h:1 does not speak TLS: is it a plain http server? Try the URL with http:// (and --insecure), or the https URL the dashboard shows (TLS: wrong version number)",
    );
    expect(describeReachFailure("http://h:1", err("ECONNREFUSED", "connect ECONNREFUSED"))).toMatch(/^nothing listens at h:1 \(connection refused\)/);
    expect(describeReachFailure("http://nope.invalid", err("ENOTFOUND", "getaddrinfo ENOTFOUND"))).toBe(
      "the host name nope.invalid does not resolve (ENOTFOUND)",
    );
  });

  it("the link's challenge against a server that is not Mesh is refused with that reason", async () => {
    const server = createServer((_req, res) => res.writeHead(404).end("Not Found"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const err = await fetchChallenge(url, undefined).catch((e) => e);
      expect(err).toBeInstanceOf(LinkRefused);
      expect(err.message).toBe(
        `${url} does not look like a Mesh control plane: /api/agent/challenge answered HTTP 404. Check the URL (the dashboard's Add machines page shows the command to copy).`,
      );
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
