// Link authentication at the upgrade, against a real database: the auth header is parsed, the node
// looked up, its signature checked, the challenge accepted once, and a node whose key links nowhere
// refused. No socket: the upgrade request is only its headers.
import { describe, expect, it } from "vitest";
import { randomBytes, sign } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { AUTH_HEADER, challengeMessage, linkRefusal } from "@mesh/protocol";
import type { Deps } from "../deps";
import { completeRetirement, retireNode, revokeNode } from "../services/lifecycle";
import { testKeyPair } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { enrolTestNode } from "../testing/test-nodes";
import { testEngines } from "@mesh/db/testing";
import { ChallengeIssuer, CHALLENGE_TTL_MS } from "./challenge";
import { authenticateLink } from "./link-auth";
import { databaseUsedNonces } from "./used-nonces";

type Signer = Awaited<ReturnType<typeof enrolTestNode>>;

describe.each(testEngines())("link authentication on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  /** A control plane's issuer on a clock the test moves. */
  const issuerAt = (clock: { now: number }) =>
    new ChallengeIssuer(
      randomBytes(32),
      databaseUsedNonces(deps.db, () => clock.now),
      () => clock.now,
    );
  const header = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields)).toString("base64url");
  /** The upgrade request of `signer` answering `nonce` as node `nodeId` (its own unless a test lies). */
  const upgrade = (signer: Pick<Signer, "privateKey">, nodeId: string, nonce: string): IncomingMessage => {
    const signature = sign(null, Buffer.from(challengeMessage(nodeId, nonce)), signer.privateKey).toString("base64");
    const auth = header({ type: "auth", nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" });
    return { headers: { [AUTH_HEADER]: auth } } as unknown as IncomingMessage;
  };
  const authenticate = (issuer: ChallengeIssuer, req: IncomingMessage) => authenticateLink(deps.db, issuer, req);

  it("accepts a node's signature over a challenge this control plane issued", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const node = await enrolTestNode(deps);
    const result = await authenticate(issuer, upgrade(node, node.nodeId, issuer.issue().nonce));
    expect(result).toMatchObject({ ok: true, auth: { nodeId: node.nodeId }, node: { id: node.nodeId, publicKey: node.publicKey } });
  });

  it("refuses another key's signature, and does not spend the nonce on it", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const node = await enrolTestNode(deps);
    const { nonce } = issuer.issue();
    const stranger = testKeyPair();
    expect(await authenticate(issuer, upgrade(stranger, node.nodeId, nonce))).toEqual({ ok: false, refusal: linkRefusal("bad-signature") });
    // A stranger cannot burn a node's nonce: the node's own answer to it still links.
    expect((await authenticate(issuer, upgrade(node, node.nodeId, nonce))).ok).toBe(true);
  });

  it("refuses a node it does not know", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const stranger = testKeyPair();
    expect(await authenticate(issuer, upgrade(stranger, crypto.randomUUID(), issuer.issue().nonce))).toEqual({
      ok: false,
      refusal: linkRefusal("unknown-node"),
    });
  });

  it("refuses a replayed challenge", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const node = await enrolTestNode(deps);
    const req = upgrade(node, node.nodeId, issuer.issue().nonce);
    expect((await authenticate(issuer, req)).ok).toBe(true);
    expect(await authenticate(issuer, req)).toEqual({ ok: false, refusal: linkRefusal("challenge-refused") });
  });

  it("accepts a challenge until it expires on the issuer's clock, and refuses it after", async () => {
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const issuer = issuerAt(clock);
    const node = await enrolTestNode(deps);
    const first = issuer.issue();
    expect(first.expiresAt).toBe(new Date(clock.now + CHALLENGE_TTL_MS).toISOString());
    const second = issuer.issue();
    clock.now += CHALLENGE_TTL_MS - 1;
    expect((await authenticate(issuer, upgrade(node, node.nodeId, first.nonce))).ok).toBe(true);
    clock.now += 1;
    expect(await authenticate(issuer, upgrade(node, node.nodeId, second.nonce))).toEqual({ ok: false, refusal: linkRefusal("challenge-refused") });
  });

  it("refuses a challenge another control plane issued", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const other = issuerAt({ now: Date.now() });
    const node = await enrolTestNode(deps);
    expect((await authenticate(issuer, upgrade(node, node.nodeId, other.issue().nonce))).ok).toBe(false);
  });

  it("refuses a revoked node and a retired one, with the right key and a fresh challenge", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const revoked = await enrolTestNode(deps);
    await revokeNode(deps, { actor: "test", id: revoked.nodeId });
    const refusal = await authenticate(issuer, upgrade(revoked, revoked.nodeId, issuer.issue().nonce));
    expect(refusal).toEqual({ ok: false, refusal: linkRefusal("node-revoked") });

    const retired = await enrolTestNode(deps);
    const { version } = await retireNode(deps, { actor: "test", input: { id: retired.nodeId } });
    expect(await completeRetirement(deps, retired.nodeId, { declarationVersion: version, owned: [] })).toBe(true);
    const refused = await authenticate(issuer, upgrade(retired, retired.nodeId, issuer.issue().nonce));
    expect(refused).toEqual({ ok: false, refusal: linkRefusal("node-retired") });
  });

  it("refuses an upgrade without an auth frame, or with one that does not parse, naming what is wrong", async () => {
    const issuer = issuerAt({ now: Date.now() });
    const bare = { headers: {} } as unknown as IncomingMessage;
    expect(await authenticate(issuer, bare)).toEqual({ ok: false, refusal: linkRefusal("bad-auth", `missing ${AUTH_HEADER} header`) });
    const garbage = { headers: { [AUTH_HEADER]: "%%%" } } as unknown as IncomingMessage;
    expect(await authenticate(issuer, garbage)).toEqual({ ok: false, refusal: linkRefusal("bad-auth", `${AUTH_HEADER} is not base64url JSON`) });
    const wrongShape = { headers: { [AUTH_HEADER]: header({ type: "auth", nodeId: "not-a-uuid" }) } } as unknown as IncomingMessage;
    const refused = await authenticate(issuer, wrongShape);
    expect(refused).toMatchObject({
      ok: false,
      refusal: { status: 401, body: { error: "bad-auth", message: expect.stringMatching(/^bad auth frame: .*nodeId/) } },
    });
  });
});
