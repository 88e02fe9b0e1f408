// The admission bucket: a bounded rate admitted, the rest given places in a queue drained at
// that rate (Retry-After growing with how many wait ahead), and a quiet gateway admits again.
// The bound on handshakes in flight: past it the rest wait, and the queue drains at the rate the
// gateway actually serves. A challenge's pass carries its turn to the upgrade, once, for a while.
import { describe, expect, it } from "vitest";
import { FairLinkAdmission, LinkAdmission, MAX_RETRY_AFTER_SECONDS, RETRY_HORIZON_SECONDS, SAMPLE_MS, type HandshakeDone } from "./admission";
import { HandshakePasses, PASS_SLOT_MS, PASS_TTL_MS } from "./handshake-passes";

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe("LinkAdmission", () => {
  it("admits a burst, then tells the rest to come back spread over the seconds the queue takes to drain", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 100, burst: 10, now: c.now });
    const answers = Array.from({ length: 1010 }, () => a.admit());
    expect(answers.filter((x) => x.admitted)).toHaveLength(10);
    const waits = answers.flatMap((x) => (x.admitted ? [] : [x.retryAfterSeconds]));
    // 1,000 refused at 100 a second: 100 told 1 s, 100 told 2 s, ... 100 told 10 s.
    for (let s = 1; s <= 10; s++) expect(waits.filter((w) => w === s)).toHaveLength(100);
    // Places are handed out in order of arrival.
    expect([...waits].sort((x, y) => x - y)).toEqual(waits);
  });

  it("refills at the rate: one second later a second's worth is admitted, up to the burst", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 100, burst: 10, now: c.now });
    for (let i = 0; i < 10; i++) expect(a.admit().admitted).toBe(true);
    expect(a.admit().admitted).toBe(false);
    c.advance(50);
    // 50 ms at 100/s: five more.
    expect(Array.from({ length: 10 }, () => a.admit()).filter((x) => x.admitted)).toHaveLength(5);
    c.advance(60_000);
    // A long quiet spell fills the bucket to its burst, not beyond.
    expect(Array.from({ length: 50 }, () => a.admit()).filter((x) => x.admitted)).toHaveLength(10);
  });

  it("drains the queue with time, so a host refused later is not sent behind hosts already served", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 10, burst: 1, now: c.now });
    a.admit();
    for (let i = 0; i < 50; i++) a.admit();
    const late = a.admit();
    expect(late).toMatchObject({ admitted: false, retryAfterSeconds: 6 });
    c.advance(10_000);
    // Ten seconds at 10/s drained the 51 places: back to the front of the queue.
    a.admit();
    expect(a.admit()).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
  });

  it("never tells a host to wait longer than the cap", () => {
    const a = new LinkAdmission({ perSecond: 1, burst: 1, now: clock().now });
    let last = a.admit();
    for (let i = 0; i < 1000; i++) last = a.admit();
    expect(last).toMatchObject({ admitted: false, retryAfterSeconds: MAX_RETRY_AFTER_SECONDS });
  });
});

describe("FairLinkAdmission", () => {
  it("one address flooding without credentials does not take the other hosts' turns", () => {
    const c = clock();
    const a = new FairLinkAdmission({ perSecond: 100, burst: 10, perAddress: 25, now: c.now });
    // The flood: thousands of upgrades a second from one address.
    let flooded = 0;
    for (let i = 0; i < 5_000; i++) if (a.admit("203.0.113.9").admitted) flooded++;
    expect(flooded).toBeLessThanOrEqual(10 + 1);
    // Another address is admitted at once, and when refused is told a short wait, not the flood's queue.
    c.advance(100);
    const other = a.admit("198.51.100.7");
    expect(other.admitted).toBe(true);
    for (let i = 0; i < 50; i++) {
      const turn = a.admit("198.51.100.7");
      if (!turn.admitted) expect(turn.retryAfterSeconds).toBeLessThanOrEqual(3);
    }
  });
});

/** Admits `n`, returning the `done` of each admitted one. */
const admitMany = (a: { admit(): ReturnType<LinkAdmission["admit"]> }, n: number) => {
  const done: HandshakeDone[] = [];
  const refused: number[] = [];
  for (let i = 0; i < n; i++) {
    const turn = a.admit();
    if (turn.admitted) done.push(turn.done);
    else refused.push(turn.retryAfterSeconds);
  }
  return { done, refused };
};

describe("handshakes in flight", () => {
  it("admits up to the bound though tokens remain; a handshake done frees its slot, once", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 1000, burst: 100, inFlight: 3, now: c.now });
    const first = admitMany(a, 10);
    expect(first.done).toHaveLength(3);
    expect(first.refused).toHaveLength(7);
    expect(a.handshakesInFlight).toBe(3);
    first.done[0]!(true);
    first.done[0]!(true); // a second call frees nothing more
    expect(a.handshakesInFlight).toBe(2);
    expect(admitMany(a, 5).done).toHaveLength(1);
    expect(a.handshakesInFlight).toBe(3);
  });

  it("while the bound holds, the queue drains at the handshakes completed per second, not the ceiling", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 1000, burst: 100, inFlight: 50, now: c.now });
    // Every 10 ms: the gateway completes one handshake (100 a second) and five hosts ask (500 a second).
    let held = admitMany(a, 50).done;
    for (let s = 0; s < 8; s++) {
      for (let i = 0; i < 100; i++) {
        c.advance(10);
        held.shift()!(true);
        held = held.concat(admitMany(a, 5).done);
      }
    }
    // The rate estimate has come down from 1,000 to what is served (halving the gap each second).
    expect(a.servedPerSecond).toBeLessThan(110);
    expect(a.servedPerSecond).toBeGreaterThanOrEqual(100);
    // A burst of 300 more, behind the hundreds queued already: at ~100 a second their turns are many
    // seconds away, past where the ceiling rate would put them (1 or 2 s) plus the horizon: told that
    // instead, to be placed again by the rate of the moment when they come back.
    const burst = admitMany(a, 300).refused;
    expect(burst).toHaveLength(300);
    expect(new Set(burst).size).toBe(1);
    expect(burst[0]).toBeLessThanOrEqual(2 + RETRY_HORIZON_SECONDS);
  });

  it("places refused hosts at the rate served while that is within the horizon, spread a second at a time", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 1000, burst: 10, inFlight: 10, now: c.now });
    // Saturated with nothing completing for a few seconds: the estimate falls to its floor, 100 a second.
    for (let s = 0; s < 6; s++) {
      admitMany(a, 20);
      c.advance(SAMPLE_MS);
    }
    c.advance(60_000); // the queue those refusals built has drained; the 10 slots are still held
    expect(a.servedPerSecond).toBe(100);
    // 700 more: the first ~100 a second are told 1, 2, … s; from the horizon on (ceiling place 1 s + 5 s) they are told 6 s.
    const waits = admitMany(a, 700).refused;
    const perSecond = new Map<number, number>();
    for (const w of waits) perSecond.set(w, (perSecond.get(w) ?? 0) + 1);
    for (let w = 1; w < 1 + RETRY_HORIZON_SECONDS; w++) expect(perSecond.get(w)).toBe(100);
    expect(perSecond.get(1 + RETRY_HORIZON_SECONDS)).toBe(200);
    expect(Math.max(...waits)).toBe(1 + RETRY_HORIZON_SECONDS);
  });

  it("a gateway that keeps up drains the queue at the ceiling again", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 1000, burst: 100, inFlight: 10, now: c.now });
    // Saturated for a few seconds with nothing completing: the estimate falls, never under a tenth of the ceiling.
    for (let s = 0; s < 6; s++) {
      admitMany(a, 20);
      c.advance(SAMPLE_MS);
    }
    admitMany(a, 1);
    expect(a.servedPerSecond).toBe(100);
    // The held handshakes finish and nobody is refused for the bound for a second: back to the ceiling.
    const b = new LinkAdmission({ perSecond: 1000, burst: 100, inFlight: 10, now: c.now });
    const held = admitMany(b, 20).done;
    c.advance(SAMPLE_MS);
    admitMany(b, 1);
    expect(b.servedPerSecond).toBe(500);
    for (const d of held) d(true);
    c.advance(SAMPLE_MS);
    for (const d of admitMany(b, 5).done) d(true);
    c.advance(SAMPLE_MS);
    admitMany(b, 1);
    expect(b.servedPerSecond).toBe(1000);
  });

  it("one address holds at most its share of the slots; others are still admitted", () => {
    const c = clock();
    const a = new FairLinkAdmission({ perSecond: 1000, burst: 100, perAddress: 1000, inFlight: 40, now: c.now });
    // The default share: a quarter of the bound.
    const flood = Array.from({ length: 100 }, () => a.admit("203.0.113.9")).filter((t) => t.admitted);
    expect(flood).toHaveLength(10);
    expect(a.admit("198.51.100.7").admitted).toBe(true);
    expect(a.handshakesInFlight).toBe(11);
    // A refusal by the shared bound gives the address's slot back.
    const b = new FairLinkAdmission({ perSecond: 1000, burst: 100, perAddress: 1000, inFlight: 2, perAddressInFlight: 2, now: c.now });
    const x = b.admit("a");
    const y = b.admit("b");
    expect(x.admitted && y.admitted).toBe(true);
    expect(b.admit("c").admitted).toBe(false);
    if (x.admitted) x.done(true);
    expect(b.admit("c").admitted).toBe(true);
    expect(b.admit("c").admitted).toBe(false);
  });
});

describe("HandshakePasses", () => {
  it("a pass is redeemed once; one unused frees its slot soon (not counted as served), and stays good until it expires", () => {
    const c = clock();
    const a = new LinkAdmission({ perSecond: 1000, burst: 100, inFlight: 2, now: c.now });
    const passes = new HandshakePasses({ now: c.now });
    const one = a.admit();
    const two = a.admit();
    if (!one.admitted || !two.admitted) throw new Error("admitted");
    passes.hold("nonce-1", one.done);
    passes.hold("nonce-2", two.done);
    expect(a.admit().admitted).toBe(false);
    // The upgrade presents its nonce: it goes through without asking again, and only once.
    const done = passes.redeem("nonce-1");
    expect(done).toBeDefined();
    expect(passes.redeem("nonce-1")).toBeUndefined();
    expect(passes.redeem("never-issued")).toBeUndefined();
    expect(passes.redeem(undefined)).toBeUndefined();
    done!(true);
    expect(a.handshakesInFlight).toBe(1);
    // The other host has not upgraded here (yet, or its upgrade went to another instance): its slot comes back soon.
    c.advance(PASS_SLOT_MS - 1);
    passes.sweep();
    expect(a.handshakesInFlight).toBe(1);
    c.advance(1);
    passes.sweep();
    expect(a.handshakesInFlight).toBe(0);
    expect(passes.holdingSlots).toBe(0);
    // A late upgrade with it is still not charged (nor counted); a pass past its TTL is gone.
    expect(passes.redeem("nonce-2")).toBeDefined();
    const three = a.admit();
    if (!three.admitted) throw new Error("admitted");
    passes.hold("nonce-3", three.done);
    c.advance(PASS_TTL_MS);
    expect(passes.redeem("nonce-3")).toBeUndefined();
    expect(passes.size).toBe(0);
    expect(a.handshakesInFlight).toBe(0);
  });
});
