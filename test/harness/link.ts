// A hand-made host link for testing the gateway's edges: enrols with a fresh
// Ed25519 key, fetches a challenge, signs it and opens the websocket.
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import WebSocket from "ws";
import { challengeMessage, AUTH_HEADER, type Profile, type Inventory } from "@mesh/protocol";

export const profile = (machineId: string): Profile => ({
  hostname: `fake-${machineId.slice(0, 6)}`,
  os: "debian",
  osRelease: "Debian GNU/Linux 12 (bookworm)",
  osVersionId: "12",
  kernel: "6.1.0",
  arch: "x86_64",
  cpus: 2,
  memoryBytes: 1 << 30,
  diskBytes: 1 << 30,
  initSystem: "systemd",
  packageManager: "dpkg",
  machineId,
  hostVersion: "0.0.0-test",
});
export const inventory: Inventory = { packages: [], units: [], ports: [], mounts: [], truncated: false };

export interface FakeHost {
  nodeId: string;
  privateKey: KeyObject;
  publicKey: string;
}

export function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return { privateKey, publicKey: publicKey.export({ type: "spki", format: "der" }).toString("base64") };
}

export async function enrolRaw(baseUrl: string, body: unknown, contentType = "application/json") {
  const res = await fetch(`${baseUrl}/api/enrol`, {
    method: "POST",
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

export async function enrolFake(baseUrl: string, token: string, machineId = crypto.randomUUID().replace(/-/g, "")): Promise<FakeHost> {
  const keys = keyPair();
  const r = await enrolRaw(baseUrl, { token, publicKey: keys.publicKey, profile: profile(machineId), inventory });
  if (r.status !== 201) throw new Error(`enrol failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { nodeId: r.body.nodeId, ...keys };
}

export async function authHeader(baseUrl: string, host: FakeHost, declarationVersion = 0): Promise<string> {
  const challenge = (await (await fetch(`${baseUrl}/api/agent/challenge`)).json()) as { nonce: string };
  const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, challenge.nonce)), host.privateKey).toString("base64");
  const frame = { type: "auth", nodeId: host.nodeId, nonce: challenge.nonce, signature, declarationVersion, hostVersion: "0.0.0-test" };
  return Buffer.from(JSON.stringify(frame)).toString("base64url");
}

/** Opens a link; resolves with the socket once open, or rejects with the HTTP status of a refused upgrade. */
export function openLink(baseUrl: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/agent`, { headers, perMessageDeflate: false, maxPayload: 8 << 20 });
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () =>
        reject(Object.assign(new Error(`upgrade refused ${res.statusCode}: ${body}`), { status: res.statusCode, body, headers: res.headers })),
      );
    });
    ws.once("error", reject);
  });
}

export async function connectFake(baseUrl: string, host: FakeHost, declarationVersion = 0) {
  return openLink(baseUrl, { [AUTH_HEADER]: await authHeader(baseUrl, host, declarationVersion) });
}

export function nextClose(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
}
