// A tiny control plane for tests (node:http + ws on 127.0.0.1, port 0): enrol,
// challenge, and the /agent upgrade with real signature checks; it records what hosts send.
import { createPublicKey, randomBytes, randomUUID, timingSafeEqual, verify, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import {
  AuthFrame,
  EVERY_FEATURE,
  EnrolRequest,
  FEATURES_HEADER,
  HOST_FEATURES_HEADER,
  HostFrame,
  ReconcileFrame,
  challengeMessage,
  linkRefusal,
  parseFeatures,
  refusalResponseText,
  type RefusalCode,
  type Report,
} from "@mesh/protocol";

export interface FakeControlPlane {
  url: string;
  reports: Report[];
  sockets: WebSocket[];
  auths: AuthFrame[];
  /** Refuse every upgrade with this code, as the gateway refuses it (the same helper builds both). */
  refuse: RefusalCode | null;
  /** Link attempts refused by `refuse` so far. */
  refused: number;
  /** Enrolment requests received; the token "good" is accepted once per request. */
  enrolments: EnrolRequest[];
  nodeId: string;
  /** Where the bootstrap secret is read when POST /api/bootstrap/token comes (accepted once); unset: 404. */
  bootstrapSecretFile?: string;
  bootstrapTokens: number;
  /** The newest store generation acknowledged, kept as the real control plane keeps it (report-batch.ts). */
  storeGeneration: number;
  /** What each linked host said it reads (HOST_FEATURES_HEADER on its upgrade), in link order. */
  hostFeatures: Set<string>[];
  /** Reconcile now on the newest link, as the gateway sends it (checked against the protocol first). */
  reconcile(frame: Omit<ReconcileFrame, "type">): void;
  close(): Promise<void>;
}

export async function startControlPlane(
  publicKey: KeyObject | null,
  onConnect: (ws: WebSocket, auth: AuthFrame) => void,
  opts: { features?: string } = {},
): Promise<FakeControlPlane> {
  const nonces = new Set<string>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  // Reads every field the protocol defines, as the real gateway says it does (features: "" plays an older one).
  const features = opts.features ?? EVERY_FEATURE;
  if (features) wss.on("headers", (headers) => headers.push(`${FEATURES_HEADER}: ${features}`));
  const cp: Partial<FakeControlPlane> = {
    reports: [],
    sockets: [],
    auths: [],
    refuse: null,
    refused: 0,
    enrolments: [],
    nodeId: randomUUID(),
    bootstrapTokens: 0,
    storeGeneration: 0,
    hostFeatures: [],
  };
  let bootstrapUsed = false;
  let key = publicKey;
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/api/agent/challenge") {
      const nonce = randomBytes(24).toString("hex");
      nonces.add(nonce);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "challenge", nonce, expiresAt: new Date(Date.now() + 60_000).toISOString() }));
      return;
    }
    if (req.method === "POST" && req.url === "/api/bootstrap/token" && cp.bootstrapSecretFile) {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const presented = Buffer.from(String(JSON.parse(Buffer.concat(chunks).toString("utf8")).secret ?? ""));
        let expected = Buffer.alloc(0);
        try {
          expected = Buffer.from(readFileSync(cp.bootstrapSecretFile!, "utf8").trim());
        } catch {
          expected = Buffer.alloc(0);
        }
        const ok = !bootstrapUsed && expected.length > 0 && expected.length === presented.length && timingSafeEqual(expected, presented);
        if (ok) {
          bootstrapUsed = true;
          cp.bootstrapTokens!++;
        }
        res.writeHead(ok ? 201 : 401, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            ok ? { token: "good", expiresAt: new Date(Date.now() + 60_000).toISOString() } : { error: "unauthorized", message: "bootstrap secret refused" },
          ),
        );
      });
      return;
    }
    if (req.method === "POST" && req.url === "/api/enrol") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const parsed = EnrolRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        };
        if (!parsed.success) return send(400, { error: "bad_request", message: parsed.error.issues[0]?.message ?? "bad" });
        if (parsed.data.token !== "good") return send(401, { error: "token_invalid", message: "token is invalid or expired" });
        cp.enrolments!.push(parsed.data);
        key = createPublicKey({ key: Buffer.from(parsed.data.publicKey, "base64"), format: "der", type: "spki" });
        send(201, { nodeId: cp.nodeId, name: parsed.data.profile.hostname, labels: { env: "test" } });
      });
      return;
    }
    res.writeHead(404).end();
  });
  const refuse = (socket: Duplex, code: RefusalCode) => socket.end(refusalResponseText(linkRefusal(code)));
  server.on("upgrade", (req, socket, head) => {
    // As the gateway: a host that resets a refused upgrade is no error of the control plane.
    socket.on("error", () => {});
    if (cp.refuse) {
      cp.refused = (cp.refused ?? 0) + 1;
      return refuse(socket, cp.refuse);
    }
    const header = req.headers["x-mesh-auth"];
    let auth: AuthFrame;
    try {
      auth = AuthFrame.parse(JSON.parse(Buffer.from(String(header), "base64url").toString("utf8")));
    } catch {
      return refuse(socket, "bad-auth");
    }
    const ok =
      key !== null &&
      nonces.delete(auth.nonce) &&
      verify(null, Buffer.from(challengeMessage(auth.nodeId, auth.nonce)), key, Buffer.from(auth.signature, "base64"));
    if (!ok) return refuse(socket, "bad-signature");
    cp.auths!.push(auth);
    cp.hostFeatures!.push(parseFeatures(req.headers[HOST_FEATURES_HEADER]));
    wss.handleUpgrade(req, socket, head, (ws) => {
      cp.sockets!.push(ws);
      ws.on("message", (data) => {
        const frame = HostFrame.parse(JSON.parse(data.toString()));
        if (frame.type === "report") {
          cp.reports!.push(frame.report);
          const g = frame.report.storeGeneration;
          const behind = g !== undefined && !frame.report.storeLost && g < cp.storeGeneration!;
          if (g !== undefined && !behind) cp.storeGeneration = frame.report.storeLost ? g : Math.max(cp.storeGeneration!, g);
          ws.send(JSON.stringify({ type: "ack", seq: frame.seq, ...(behind ? { storeGeneration: cp.storeGeneration } : {}) }));
        }
      });
      onConnect(ws, auth);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cp.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cp.reconcile = (frame) => {
    const ws = cp.sockets!.at(-1);
    if (!ws) throw new Error("no host is linked");
    ws.send(JSON.stringify(ReconcileFrame.parse({ type: "reconcile", ...frame })));
  };
  cp.close = async () => {
    for (const ws of cp.sockets!) ws.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return cp as FakeControlPlane;
}
