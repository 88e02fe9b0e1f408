// The apt commands the Add machines page gives: plain over http, pinned over TLS, every value quoted.
import { describe, expect, it } from "vitest";
import { aptInstallCommands } from "./apt-install-commands";

const PIN = `sha256:${"ab".repeat(32)}`;

describe("aptInstallCommands", () => {
  it("over http: the key, the signed-by sources line, no transport line", () => {
    const c = aptInstallCommands("http://mesh.example:3000", PIN);
    expect(c.key).toBe("curl -fsSL -o /usr/share/keyrings/mesh.gpg http://mesh.example:3000/apt/mesh.gpg");
    expect(c.sourceLine).toBe("deb [signed-by=/usr/share/keyrings/mesh.gpg] http://mesh.example:3000/apt stable main");
    expect(c.source).toBe("echo 'deb [signed-by=/usr/share/keyrings/mesh.gpg] http://mesh.example:3000/apt stable main' > /etc/apt/sources.list.d/mesh.list");
    expect(c.transport).toBeUndefined();
    expect(c.install).toBe("apt-get update && apt-get install -y mesh-host");
  });

  it("over https with a pin: the key fetched pinned, apt told to skip the certificate of that one host", () => {
    const c = aptInstallCommands("https://mesh.example:8443", PIN);
    const curlPin = "sha256//q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=";
    expect(c.key).toBe(`curl -fsSL -k --pinnedpubkey ${curlPin} -o /usr/share/keyrings/mesh.gpg https://mesh.example:8443/apt/mesh.gpg`);
    expect(c.transport).toBe(`echo 'Acquire::https::mesh.example::Verify-Peer "false";' > /etc/apt/apt.conf.d/50mesh`);
  });

  it("over https without a pin (a certificate the machine trusts, behind a proxy): plain curl, no transport line", () => {
    const c = aptInstallCommands("https://mesh.example");
    expect(c.key).toBe("curl -fsSL -o /usr/share/keyrings/mesh.gpg https://mesh.example/apt/mesh.gpg");
    expect(c.transport).toBeUndefined();
  });

  it("quotes a public URL that carries shell syntax", () => {
    const c = aptInstallCommands("http://x.example/a'b$(id)");
    expect(c.key).toBe(`curl -fsSL -o /usr/share/keyrings/mesh.gpg 'http://x.example/a'\\''b$(id)/apt/mesh.gpg'`);
    expect(c.source).toBe(
      `echo 'deb [signed-by=/usr/share/keyrings/mesh.gpg] http://x.example/a'\\''b$(id)/apt stable main' > /etc/apt/sources.list.d/mesh.list`,
    );
  });
});
