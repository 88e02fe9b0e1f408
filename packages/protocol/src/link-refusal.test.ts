import { describe, expect, it } from "vitest";
import { LINK_REFUSALS, linkRefusal, refusalCodeOf, refusalResponseText, type RefusalCode } from "./link-refusal";
import { HttpError } from "./enrol";

describe("link refusals", () => {
  it("send a known node refused for its state 403, a credential that proves nothing 401, and come-back-later 503", () => {
    for (const code of ["node-revoked", "node-retired", "node-pending"] as const) expect(linkRefusal(code).status).toBe(403);
    for (const code of ["bad-auth", "unknown-node", "bad-signature", "challenge-refused", "clock-skew", "claim-pending", "claim-rejected"] as const)
      expect(linkRefusal(code).status).toBe(401);
    for (const code of ["busy", "reconnecting-too-often", "unavailable"] as const) expect(linkRefusal(code).status).toBe(503);
  });

  it("carry the code in the body every HTTP refusal has (an older host still reads the message), and say the state as before", () => {
    const refusal = linkRefusal("node-revoked");
    expect(refusal.body).toEqual({ error: "node-revoked", message: "node is revoked" });
    expect(HttpError.parse(refusal.body)).toEqual(refusal.body);
    expect(linkRefusal("bad-auth", "missing x-mesh-auth header").body.message).toBe("missing x-mesh-auth header");
    expect(linkRefusal("bad-auth", "x".repeat(5000)).body.message).toHaveLength(1024);
  });

  it("read back as the code from every refusal's body", () => {
    for (const code of Object.keys(LINK_REFUSALS) as RefusalCode[]) expect(refusalCodeOf(JSON.stringify(linkRefusal(code).body))).toBe(code);
  });

  it("read as no code from any other body: an older control plane's English, another error, a proxy's page, nothing", () => {
    expect(refusalCodeOf(JSON.stringify({ error: "UNAUTHORIZED", message: "node is revoked" }))).toBeNull();
    expect(refusalCodeOf(JSON.stringify({ error: "node-exploded", message: "?" }))).toBeNull();
    expect(refusalCodeOf(JSON.stringify({ error: "node-revoked" }))).toBeNull();
    expect(refusalCodeOf("<html>502 Bad Gateway</html>")).toBeNull();
    expect(refusalCodeOf("")).toBeNull();
    expect(refusalCodeOf("null")).toBeNull();
  });

  it("end an upgrade as one HTTP response: status line, Retry-After when asked, the body's byte length", () => {
    const text = refusalResponseText(linkRefusal("busy", "wait é"), 7);
    const [head, body] = text.split("\r\n\r\n") as [string, string];
    expect(head.split("\r\n")).toEqual([
      "HTTP/1.1 503 Service Unavailable",
      "Connection: close",
      "Retry-After: 7",
      "Content-Type: application/json",
      `Content-Length: ${new TextEncoder().encode(body).length}`,
    ]);
    expect(JSON.parse(body)).toEqual({ error: "busy", message: "wait é" });
    expect(refusalResponseText(linkRefusal("node-retired"))).toMatch(/^HTTP\/1\.1 403 Forbidden\r\nConnection: close\r\nContent-Type/);
  });
});
