// Processes only through the Runner: accounts (getent), the facts (dpkg-query, systemctl) and
// the self-upgrade's version check run what they run through the Runner they are given, and
// read a listing whole when the Runner is asked for more than its default tail.
import { describe, expect, it } from "vitest";
import { collectInventory } from "../machine/inventory";
import { hostInstall } from "../machine/profile";
import { Accounts } from "../resources/accounts";
import { ProcessRunner } from "./process-runner";
import { RecordingRunner } from "./recording-runner";
import { MAX_OUTPUT_BYTES, outputOf } from "./runner";

describe("through the Runner", () => {
  it("Accounts asks getent, through the Runner, for a user /etc/passwd does not name", async () => {
    const runner = new RecordingRunner([
      { match: ["getent", "passwd", "mesh-ldap-user"], result: { stdout: "mesh-ldap-user:x:70001:70002::/home/l:/bin/sh\n" }, repeat: true },
    ]);
    const accounts = new Accounts("/", runner);
    expect(await accounts.user("mesh-ldap-user")).toEqual({ uid: 70001, gid: 70002, home: "/home/l" });
    expect(runner.argvs[0]).toEqual(["getent", "passwd", "mesh-ldap-user"]);
  });

  it("Accounts says a user getent does not know is unknown", async () => {
    const runner = new RecordingRunner([{ match: ["getent"], result: { code: 2 }, repeat: true }]);
    await expect(new Accounts("/", runner).uid("mesh-nobody-here")).rejects.toThrow(/unknown user "mesh-nobody-here" on this machine/);
  });

  it("the inventory lists packages and units from dpkg-query and systemctl run by the Runner", async () => {
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "ii \tcurl\t8.5.0\nrc \told\t1\nii \tnginx\t1.24\n" } },
      { match: ["systemctl"], result: { stdout: "nginx.service loaded active running nginx\ncron.service loaded active running cron\n" } },
    ]);
    const inventory = await collectInventory({ packageManager: "dpkg", initSystem: "systemd" }, runner);
    expect(inventory.packages).toEqual([
      { name: "curl", version: "8.5.0" },
      { name: "nginx", version: "1.24" },
    ]);
    expect(inventory.units).toEqual([
      { name: "nginx.service", state: "active/running" },
      { name: "cron.service", state: "active/running" },
    ]);
    // A listing is read whole, not the default tail.
    expect(runner.calls[0]!.opts.maxOutputBytes).toBeGreaterThan(MAX_OUTPUT_BYTES);
  });

  it("the profile asks dpkg-query, through the Runner, who owns the running binary", async () => {
    const runner = new RecordingRunner([{ match: ["dpkg-query"], result: { stdout: "mesh-host: /usr/bin/mesh-host\n" } }]);
    expect(await hostInstall("/", "/usr/bin/mesh-host", true, runner)).toBe("deb");
    expect(runner.argvs).toEqual([["dpkg-query", "-S", "/usr/bin/mesh-host"]]);
  });

  it("ProcessRunner keeps more than its default tail when asked", async () => {
    const bytes = MAX_OUTPUT_BYTES * 2;
    const out = await outputOf(new ProcessRunner(), ["head", "-c", String(bytes), "/dev/zero"], { maxOutputBytes: bytes });
    expect(out?.length).toBe(bytes);
    const tail = await outputOf(new ProcessRunner(), ["head", "-c", String(bytes), "/dev/zero"]);
    expect(tail?.length).toBe(MAX_OUTPUT_BYTES);
  });

  it("outputOf is null for a program that fails or cannot start", async () => {
    expect(await outputOf(new ProcessRunner(), ["false"])).toBeNull();
    expect(await outputOf(new ProcessRunner(), ["/nonexistent/mesh-program"])).toBeNull();
  });
});
