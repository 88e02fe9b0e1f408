// Trust on first contact: the enrol command carries the pin of the server's key;
// a host refuses a control plane whose certificate does not match, before sending
// anything, and plain http needs an explicit --insecure. Two certificates on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { makeCertificate, type TestCertificate } from "../harness/certificates";
import { waitFor } from "../harness/wait";
import { curlPin } from "@mesh/protocol";

// The test's own API calls accept the self-signed certificate. Hosts inherit this too, on
// purpose: a pinned host must not let the variable switch its checks off.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";

describe("TLS pinning", () => {
  let cp: ControlPlane;
  let a: TestCertificate;
  let b: TestCertificate;
  const hosts: Host[] = [];
  const newHost = () => {
    const h = new Host("trust");
    hosts.push(h);
    return h;
  };

  beforeAll(async () => {
    a = makeCertificate("plane-a");
    b = makeCertificate("plane-b");
    cp = await ControlPlane.start({ engine: engines()[0]!, env: { MESH_TLS_CERT: a.certPath, MESH_TLS_KEY: a.keyPath } });
  });
  afterAll(async () => {
    for (const h of hosts) {
      await h.stop();
      h.dispose();
    }
    await cp?.dispose();
  });

  it("puts the pin of the served certificate in the enrol command", async () => {
    expect(cp.url).toMatch(/^https:/);
    const { command, token, installCommand } = await api(cp.url).mutate("token.create", {});
    // curl pins the same key (base64 of the same sha256) to fetch the installer
    const pinned = curlPin(a.pin);
    expect(installCommand).toBe(`curl -fsSL -k --pinnedpubkey ${pinned} ${cp.url}/download/install.sh | MESH_CURL_OPTS='-k --pinnedpubkey ${pinned}' sh`);
    expect(command).toBe(`printf '%s\\n' ${token} | mesh-host enrol ${cp.url} --token - --ca-pin ${a.pin}`);
  });

  it("refuses to enrol with a server whose key does not match the pin, and sends nothing", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    const before = (await api(cp.url).query("node.list")).total;
    const r = newHost().enrol(cp.url, token, ["--ca-pin", b.pin]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/presented a certificate whose key is sha256:[0-9a-f]{64}, not the pinned/);
    expect((await api(cp.url).query("node.list")).total).toBe(before);
    // the token was never sent, so it still works with the right pin
    expect(newHost().enrol(cp.url, token, ["--ca-pin", a.pin]).code).toBe(0);
  });

  it("refuses https without a pin unless --insecure, and says why", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    const r = newHost().enrol(cp.url, token, []);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/impostor/);
  });

  it("holds a pinned link, and will not talk to the same address with another certificate", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    const host = newHost();
    expect(host.enrol(cp.url, token, ["--ca-pin", a.pin]).code).toBe(0);
    const nodeId = host.status().nodeId as string;
    host.run(1);
    await waitFor("pinned link up", async () => (await api(cp.url).query("node.get", { id: nodeId })).state === "enrolled");

    await cp.stop();
    cp.options.env = { MESH_TLS_CERT: b.certPath, MESH_TLS_KEY: b.keyPath };
    await cp.boot();
    await waitFor("host refuses the impostor", () => /does not match the pinned key/.test(host.output), 20_000).catch((err) => {
      throw new Error(
        `${err.message}\n${host.output
          .split("\n")
          .filter((l) => /link|refused|pinned/.test(l))
          .slice(-10)
          .join("\n")}`,
      );
    });
    expect((await api(cp.url).query("node.get", { id: nodeId })).state).toBe("disconnected");
  });
});
