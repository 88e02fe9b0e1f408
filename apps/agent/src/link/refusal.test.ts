// Refusals at the upgrade: the host acts on the refusal's code (link-refusal.ts in the protocol), not
// on its English; a body without a known code is a plain refusal, retried. The test control plane
// refuses with the protocol's own bytes, the same the gateway's test (packages/api
// gateway/link-refusal.test.ts) finds the real gateway sending.
import { randomBytes } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { AGENT_PATH, CHALLENGE_PATH, LINK_REFUSALS, linkRefusal, refusalResponseText, type RefusalCode } from "@mesh/protocol";
import { startControlPlane } from "./fake-control-plane";
import { waitFor } from "../testing/wait-for";
import { testLink } from "./test-link";
import { Backoff } from "./backoff";
import { cleanupsAfterEach } from "../testing/cleanups";

const cleanups = cleanupsAfterEach();

/** The whole raw answer of a control plane at `url` to an upgrade. */
function rawUpgrade(url: string): Promise<string> {
  const { hostname, port, host } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
    socket.write(
      `GET ${AGENT_PATH} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n\r\n`,
    );
  });
}

/** A link to `url` whose revoked and retired events are recorded. */
function startLink(url: string) {
  const seen = { revoked: [] as string[], retired: 0 };
  const link = testLink(
    url,
    { onRevoked: (reason) => void seen.revoked.push(reason), onRetired: () => void seen.retired++ },
    { backoff: new Backoff({ baseMs: 20, capMs: 40 }) },
  );
  link.start();
  cleanups.push(() => link.stop());
  return seen;
}

describe("link refusals", () => {
  it("the test control plane refuses with the protocol's bytes for every code", async () => {
    const cp = await startControlPlane(null, () => undefined);
    cleanups.push(() => cp.close());
    for (const code of Object.keys(LINK_REFUSALS) as RefusalCode[]) {
      cp.refuse = code;
      expect(await rawUpgrade(cp.url)).toBe(refusalResponseText(linkRefusal(code)));
    }
  });

  it("node-retired: the host forgets its identity; node-revoked: it says so, with the message", async () => {
    const retiredCp = await startControlPlane(null, () => undefined);
    cleanups.push(() => retiredCp.close());
    retiredCp.refuse = "node-retired";
    const retired = startLink(retiredCp.url);
    await waitFor("retired", () => retired.retired > 0);
    expect(retired.revoked).toEqual([]);

    const revokedCp = await startControlPlane(null, () => undefined);
    cleanups.push(() => revokedCp.close());
    revokedCp.refuse = "node-revoked";
    const revoked = startLink(revokedCp.url);
    await waitFor("revoked", () => revoked.revoked.length > 0);
    expect(revoked).toEqual({ revoked: ["node is revoked"], retired: 0 });
  });

  /** A control plane that answers challenges and refuses every upgrade with `response`, counting upgrades. */
  async function refusingWith(response: string) {
    const upgrades = { count: 0 };
    const server = http.createServer((req, res) => {
      if (req.url !== CHALLENGE_PATH) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "challenge", nonce: randomBytes(24).toString("hex"), expiresAt: new Date(Date.now() + 60_000).toISOString() }));
    });
    server.on("upgrade", (_req, socket) => (upgrades.count++, socket.end(response)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, upgrades };
  }

  it("a refusal with no known code (an older control plane's English, a proxy's page) is a plain refusal: retried with backoff, never revoked or retired", async () => {
    const older = (status: number, message: string) => {
      const body = JSON.stringify({ error: status === 403 ? "FORBIDDEN" : "UNAUTHORIZED", message });
      return `HTTP/1.1 ${status} No\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    };
    for (const response of [
      older(403, "node is revoked"),
      older(401, "node is retired"),
      "HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\n<h1>no</h1",
    ]) {
      const cp = await refusingWith(response);
      const seen = startLink(cp.url);
      await waitFor("three attempts", () => cp.upgrades.count >= 3);
      expect(seen).toEqual({ revoked: [], retired: 0 });
    }
  });

  it("a refusal for the credential (claim pending, bad signature) is retried with backoff, never revoked", async () => {
    for (const code of ["claim-pending", "bad-signature", "node-pending"] as const) {
      const cp = await refusingWith(refusalResponseText(linkRefusal(code)));
      const seen = startLink(cp.url);
      await waitFor("three attempts", () => cp.upgrades.count >= 3);
      expect(seen).toEqual({ revoked: [], retired: 0 });
    }
  });
});
