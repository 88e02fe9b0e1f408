// The send loop of a fleet push yields to the event loop as it goes: a save's HTTP answer, pings and
// report frames are not held behind thousands of sends, and a yield never lets an older version
// overtake a newer one for the same link. Fake sockets (the loop's only I/O), the real pusher.
import { describe, expect, it } from "vitest";
import pino from "pino";
import type { WebSocket } from "ws";
import type { CommittedDeclaration, Deps } from "../deps";
import { SEND_SLICE_LINKS, createPusher, type PushLink } from "./push";

/** A link whose socket records each whole message's version, and the order writes happened in across links. */
function fakeLink(nodeId: string, journal: Array<{ nodeId: string; version: number }>) {
  const versions: number[] = [];
  let parts: Buffer[] = [];
  const ws = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    send(data: Buffer, opts: { fin: boolean }) {
      parts.push(data);
      if (!opts.fin) return;
      const frame = JSON.parse(Buffer.concat(parts).toString()) as { declaration: { version: number } };
      parts = [];
      versions.push(frame.declaration.version);
      journal.push({ nodeId, version: frame.declaration.version });
    },
  };
  const link: PushLink = { nodeId, ws: ws as unknown as WebSocket, knownVersion: 0, queue: Promise.resolve() };
  return { link, versions };
}

const LINKS = 2_000;

function setup() {
  // pushCommitted reads nothing: the database is never touched.
  const pusher = createPusher({ db: undefined } as unknown as Deps, pino({ level: "silent" }));
  const journal: Array<{ nodeId: string; version: number }> = [];
  const fakes = Array.from({ length: LINKS }, (_, i) => fakeLink(`node-${i}`, journal));
  const links = new Map(fakes.map((f) => [f.link.nodeId, f.link]));
  const rows = (version: number): CommittedDeclaration[] =>
    fakes.map((f) => ({
      nodeId: f.link.nodeId,
      version,
      hash: `h${version}`.padEnd(64, "0"),
      resources: [{ type: "file", id: "f", path: "/etc/f", content: `v${version}` }],
    }));
  return { pusher, journal, fakes, links, rows };
}

describe("a fleet push's send loop", () => {
  it("lets a timer, an immediate and I/O callbacks run before it has written every link", async () => {
    const { pusher, journal, links, rows } = setup();
    let atImmediate = -1;
    let atTimer = -1;
    setImmediate(() => (atImmediate = journal.length));
    setTimeout(() => (atTimer = journal.length), 0);
    const summary = await pusher.pushCommitted(links, rows(1));
    expect(summary).toMatchObject({ shared: LINKS, bodies: 1, behind: 0 });
    expect(journal.length).toBe(LINKS);
    // The first slice goes synchronously (the frames still leave right after commit), then the loop yields.
    expect(atImmediate).toBeGreaterThan(0);
    expect(atImmediate).toBeLessThanOrEqual(SEND_SLICE_LINKS);
    expect(atTimer).toBeGreaterThan(0);
    expect(atTimer).toBeLessThan(LINKS);
  });

  it("never sends a link an older version after a newer one, when a newer push starts while an older one yields", async () => {
    const { pusher, fakes, links, rows } = setup();
    const older = pusher.pushCommitted(links, rows(1));
    // The newer push starts while the older one yields, from the other end of the fleet (links the older
    // loop has not reached yet), and sends its own first slice at once: the older loop must skip those.
    let newer: Promise<unknown> | undefined;
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        newer = pusher.pushCommitted(links, rows(2).reverse());
        resolve();
      }),
    );
    const [a] = await Promise.all([older, newer]);
    // Some links got version 1, some never did (the newer push got there first); none got 1 after 2, and
    // every link ends on 2, sent once.
    expect((a as { shared: number }).shared).toBeGreaterThan(0);
    expect((a as { shared: number }).shared).toBeLessThan(LINKS);
    for (const f of fakes) {
      expect(f.versions.at(-1)).toBe(2);
      expect(f.versions).toEqual([...f.versions].sort((x, y) => x - y));
      expect(new Set(f.versions).size).toBe(f.versions.length);
      expect(f.link.knownVersion).toBe(2);
    }
    // The same rows again (the notification's path or a repeated call): nothing is sent twice.
    const again = await pusher.pushCommitted(links, rows(2));
    expect(again.shared).toBe(0);
  });
});
