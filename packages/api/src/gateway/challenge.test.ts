// Link nonces are accepted once across every instance sharing the database (issue 10,
// item 18): two issuers with one secret and one database, as two instances have.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { linkNoncesUsed } from "@mesh/db";
import { ChallengeIssuer } from "./challenge";
import { databaseUsedNonces } from "./used-nonces";

describe.each(testEngines())("link challenges on %s", (engine) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
  }, 60_000);
  afterAll(() => t?.drop());

  it("a nonce accepted by one instance is refused by another, and by the same one again", async () => {
    const secret = randomBytes(32);
    const a = new ChallengeIssuer(secret, databaseUsedNonces(t.database.db));
    const b = new ChallengeIssuer(secret, databaseUsedNonces(t.database.db));
    const { nonce } = a.issue();
    expect(await a.accept(nonce)).toBe(true);
    expect(await b.accept(nonce)).toBe(false);
    expect(await a.accept(nonce)).toBe(false);
    // a nonce issued by one and used first on the other is just as single-use
    const other = b.issue().nonce;
    expect(await a.accept(other)).toBe(true);
    expect(await b.accept(other)).toBe(false);
  });

  it("a burst of claims on two instances accepts each nonce exactly once, in a few statements", async () => {
    const secret = randomBytes(32);
    let inserts = 0;
    // Counts the INSERTs the claims make (a fleet re-linking must not be one write per host).
    const counting = new Proxy(t.database.db, {
      get(target, prop, receiver) {
        if (prop === "insert") inserts++;
        return Reflect.get(target, prop, receiver);
      },
    });
    const a = new ChallengeIssuer(secret, databaseUsedNonces(counting));
    const b = new ChallengeIssuer(secret, databaseUsedNonces(counting));
    const nonces = Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).issue().nonce);
    // Every nonce is presented to both instances at once (a replay racing the real host).
    const results = await Promise.all(nonces.flatMap((n) => [a.accept(n), b.accept(n)]));
    for (let i = 0; i < nonces.length; i++) expect(Number(results[2 * i]) + Number(results[2 * i + 1])).toBe(1);
    expect(inserts).toBeLessThanOrEqual(6);
  });

  it("refuses a forged or expired nonce without recording it", async () => {
    let now = Date.now();
    const issuer = new ChallengeIssuer(
      randomBytes(32),
      databaseUsedNonces(t.database.db, () => now),
      () => now,
    );
    const stranger = new ChallengeIssuer(randomBytes(32), databaseUsedNonces(t.database.db));
    expect(await issuer.accept(stranger.issue().nonce)).toBe(false);
    const { nonce } = issuer.issue();
    now += 61_000;
    expect(await issuer.accept(nonce)).toBe(false);
  });

  it("prunes expired rows", async () => {
    await t.database.db.insert(linkNoncesUsed).values({ nonce: "expired-one", expiresAt: new Date(Date.now() - 3_600_000) });
    const fresh = new ChallengeIssuer(randomBytes(32), databaseUsedNonces(t.database.db));
    expect(await fresh.accept(fresh.issue().nonce)).toBe(true);
    const rows = await t.database.db.select({ n: sql<number>`count(*)::int` }).from(linkNoncesUsed).where(sql`${linkNoncesUsed.nonce} = 'expired-one'`);
    expect(rows[0]!.n).toBe(0);
  });
});
