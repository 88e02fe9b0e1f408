// The admission bucket: a bounded rate admitted, the rest given places in a queue drained at
// that rate (Retry-After growing with how many wait ahead), and a quiet gateway admits again.
import { describe, expect, it } from "vitest";
import { FairLinkAdmission, LinkAdmission, MAX_RETRY_AFTER_SECONDS } from "./admission";

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
