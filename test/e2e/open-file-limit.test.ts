// At the open-file limit (issue 11): the control plane runs with its soft limit at the hard one and,
// past its socket budget, answers new connections 503 and logs it once per interval with the count.
import fs from "node:fs";
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;

function hold(port: number, from: string): Promise<{ socket: net.Socket; received: () => string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: from });
    let received = "";
    socket.on("data", (d) => (received += d));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, received: () => received }));
    socket.once("close", () => resolve({ socket, received: () => received }));
  });
}

const softLimit = (pid: number) => Number(/Max open files\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"))![1]);

describe(`open-file limit (${engine})`, () => {
  const started: ControlPlane[] = [];
  afterAll(async () => {
    for (const cp of started) await cp.dispose();
  });

  it("raises its soft open-file limit to the hard one at start", async () => {
    const cp = await ControlPlane.start({ engine, openFiles: "256:2048", env: { MESH_ROLE: "gateway" } });
    started.push(cp);
    // Node itself may already have raised it before our code runs ("raised":false then); the limit in /proc is what counts.
    expect(cp.output).toMatch(/"soft":2048,"hard":2048,"raised":(true|false),"socketBudget":\d+/);
    expect(softLimit(cp.pid)).toBe(2048);
  });

  it("answers 503 past its socket budget, logs it with a count, and serves again once sockets close", async () => {
    const cp = await ControlPlane.start({ engine, openFiles: "256:256", env: { MESH_ROLE: "gateway" } });
    started.push(cp);
    const budget = Number(/"socketBudget":(\d+)/.exec(cp.output)![1]);
    expect(budget).toBeLessThan(200);
    const flood: Array<{ socket: net.Socket; received: () => string }> = [];
    for (let i = 0; i < 200; i++) flood.push(await hold(cp.port, "127.0.0.2"));
    await waitFor("refusals to be answered", () => flood.filter((c) => c.received().startsWith("HTTP/1.1 503")).length >= 200 - budget - 8 || null);
    await waitFor(
      "the refusal to be logged",
      () => /"refused":\d+,"open":\d+,"budget":\d+,"msg":"open-file limit reached: new connections refused with 503/.test(cp.output) || null,
    );
    // Refused, not reset: the caller is told.
    expect((await fetch(`${cp.url}/api/agent/challenge`)).status).toBe(503);
    for (const c of flood) c.socket.destroy();
    await waitFor("the control plane to serve again", async () => ((await fetch(`${cp.url}/api/agent/challenge`)).status === 200 ? true : null));
  });
});
