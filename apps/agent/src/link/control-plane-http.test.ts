// A request that gets no answer in time says whether the control plane accepted its connection:
// a live one (busy, its accept queue full) is retried in a short window, an absent one backs off.
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NoAnswerInTime, controlPlaneRequest } from "./control-plane-http";
import { timedOutAgainstLiveServer } from "./backoff";

let server: net.Server | null = null;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe("controlPlaneRequest timeouts", () => {
  it("a server that accepts the connection and never answers: no answer in time, connected", async () => {
    const held: net.Socket[] = [];
    server = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const err = await controlPlaneRequest(`http://127.0.0.1:${port}/api/agent/challenge`, { timeoutMs: 200 }).catch((e: unknown) => e);
    for (const s of held) s.destroy();
    expect(err).toBeInstanceOf(NoAnswerInTime);
    expect(err).toMatchObject({ connected: true, message: expect.stringMatching(/no answer from 127\.0\.0\.1:\d+ in time/) });
    expect(timedOutAgainstLiveServer(err, false)).toBe(true);
  });

  it("nothing listening is not a live server", async () => {
    server = net.createServer();
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = null;
    const err = await controlPlaneRequest(`http://127.0.0.1:${port}/api/agent/challenge`, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(NoAnswerInTime);
    expect(timedOutAgainstLiveServer(err, false)).toBe(false);
  });
});
