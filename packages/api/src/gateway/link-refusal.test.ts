// Refusals at the upgrade and on a request signed by the node key, against a real gateway and
// database: each is the status and body linkRefusal builds for its code (the bytes the host's test
// control plane sends too, apps/agent fake-control-plane.ts), so the host's switch on the code is
// tested against what the gateway really says.
import net from "node:net";
import { createHash, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import {
  AGENT_PATH,
  AUTH_HEADER,
  CHALLENGE_PATH,
  HTTP_SIGNATURE_HEADERS,
  challengeMessage,
  httpSignatureMessage,
  linkRefusal,
  refusalResponseText,
  type RefusalCode,
} from "@mesh/protocol";
import { jsonError } from "../http/json-body";
import { authenticateNodeRequest } from "../http/node-signature";
import { servedGatewayFixture, type RawHost } from "../testing/raw-hosts";
import { testKeyPair } from "../testing/host-facts";

/** The gateway's whole answer to an upgrade signed by `host` (or by `signer`'s key in its name), as raw bytes. */
async function rawUpgrade(base: string, host: RawHost, signer: Pick<RawHost, "privateKey"> = host): Promise<string> {
  const { nonce } = (await (await fetch(base + CHALLENGE_PATH)).json()) as { nonce: string };
  const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), signer.privateKey).toString("base64");
  const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" })).toString(
    "base64url",
  );
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
    socket.write(
      `GET ${AGENT_PATH} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
        `Sec-WebSocket-Key: ${Buffer.from("0123456789abcdef").toString("base64")}\r\n${AUTH_HEADER}: ${auth}\r\n\r\n`,
    );
  });
}

/** A GET of a file signed by `host`'s key at `time`. */
function signedRequest(host: RawHost, time = new Date().toISOString()): Request {
  const path = `/api/files/${"a".repeat(64)}`;
  const message = httpSignatureMessage("GET", path, time, createHash("sha256").update(Buffer.alloc(0)).digest("hex"));
  return new Request(`http://cp${path}`, {
    headers: {
      [HTTP_SIGNATURE_HEADERS.node]: host.nodeId,
      [HTTP_SIGNATURE_HEADERS.time]: time,
      [HTTP_SIGNATURE_HEADERS.signature]: sign(null, Buffer.from(message), host.privateKey).toString("base64"),
    },
  });
}

describe.each(testEngines())("link refusals on %s", (engine) => {
  const served = servedGatewayFixture(engine);
  async function setup() {
    const { deps, base, hosts } = await served();
    const host = hosts[0]!;
    const setState = (state: "pending" | "revoked" | "retired") => deps.db.update(nodes).set({ state }).where(eq(nodes.id, host.nodeId));
    return { deps, base, host, setState };
  }

  it("refuses a revoked, retired or pending node 403 with its state's code: the bytes linkRefusal builds, as the test control plane sends them", async () => {
    const { base, host, setState } = await setup();
    for (const [state, code] of [
      ["revoked", "node-revoked"],
      ["retired", "node-retired"],
      ["pending", "node-pending"],
    ] as const) {
      await setState(state);
      expect(await rawUpgrade(base, host)).toBe(refusalResponseText(linkRefusal(code)));
    }
  });

  it("refuses an unknown node and a key that is not the node's 401 with their codes", async () => {
    const { base, host } = await setup();
    const stranger = { ...testKeyPair(), nodeId: crypto.randomUUID() };
    expect(await rawUpgrade(base, stranger)).toBe(refusalResponseText(linkRefusal("unknown-node")));
    expect(await rawUpgrade(base, host, testKeyPair())).toBe(refusalResponseText(linkRefusal("bad-signature")));
  });

  it("refuses a signed request of a revoked node 403 with the same body, and a stale one 401 as clock-skew", async () => {
    const { deps, host, setState } = await setup();
    await expect(authenticateNodeRequest(deps.db, signedRequest(host))).resolves.toEqual({ nodeId: host.nodeId });
    const refused = async (request: Request): Promise<{ status: number; body: unknown }> => {
      const res = jsonError(
        deps,
        await authenticateNodeRequest(deps.db, request).then(
          () => new Error("accepted"),
          (err: unknown) => err,
        ),
      );
      return { status: res.status, body: await res.json() };
    };
    const stale = await refused(signedRequest(host, new Date(Date.now() - 3_600_000).toISOString()));
    expect(stale).toEqual({ status: 401, body: linkRefusal("clock-skew").body });
    for (const [state, code] of [
      ["revoked", "node-revoked"],
      ["retired", "node-retired"],
    ] as const satisfies [string, RefusalCode][]) {
      await setState(state);
      const { status, body } = linkRefusal(code);
      expect(await refused(signedRequest(host))).toEqual({ status, body });
    }
  });
});
