// dpkg's locks and apt's passing failures: a change waits (bounded, on the agent's clock) while
// unattended-upgrades or an operator's apt holds dpkg's lock, and a failure that passes (a lock still
// held, a mirror or DNS down) is a TransientPackageError; a real one (no such package) is not.
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PackageResource } from "@mesh/protocol";
import { ManualClock } from "../manual-clock";
import { RecordingRunner } from "../runner/recording-runner";
import { CommandFailedError } from "../runner/runner";
import { tempDirs } from "../testing/temp-dirs";
import { applyPackage, isTransientPackageError, lockHeldInProcLocks, procLocksName, TransientPackageError } from "./package";

const freshDir = tempDirs("mesh-dpkg-lock-");
const nginx: PackageResource = { type: "package", id: "nginx", name: "nginx", state: "installed", onDrift: "correct" };
const absent = { name: "nginx", installed: false, version: null, status: "not-installed" };
const installed = { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.2-1\n" } };

/** Runs `work` while moving the clock a second at a time, as the real one would. */
async function withTimePassing<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => (done = true));
  for (let i = 0; i < 1000 && !done; i++) {
    await new Promise((r) => setImmediate(r));
    clock.advance(1_000);
  }
  return settled;
}

describe("dpkg's locks", () => {
  it("a change waits while another process holds lock-frontend, then runs", async () => {
    const clock = new ManualClock();
    const asked: string[] = [];
    const since = clock.now();
    // unattended-upgrades holds the frontend lock for 5 s.
    const lockHeld = async (path: string) => {
      asked.push(path);
      return path.endsWith("lock-frontend") && clock.now() - since < 5_000;
    };
    const runner = new RecordingRunner([{ match: ["apt-get", "install"] }, installed]);
    await withTimePassing(clock, applyPackage({ runner, root: "/", clock, lockHeld, lockWaitMs: 60_000 }, nginx, absent));
    expect(runner.argvs[0]![0]).toBe("apt-get");
    expect(clock.now() - since).toBeGreaterThanOrEqual(5_000);
    expect(clock.now() - since).toBeLessThan(60_000);
    expect(asked).toContain("/var/lib/dpkg/lock-frontend");
    expect(asked).toContain("/var/lib/dpkg/lock");
  });

  it("a lock still held at the end of the wait is a transient failure, and nothing runs", async () => {
    const clock = new ManualClock();
    const runner = new RecordingRunner([]);
    const lockHeld = async (path: string) => path === "/srv/root/var/lib/dpkg/lock";
    const err = await withTimePassing(
      clock,
      applyPackage(
        { runner, root: "/srv/root", clock, lockHeld, lockWaitMs: 30_000 },
        { ...nginx, state: "absent" },
        { ...absent, installed: true, version: "1.2-1", status: "install ok installed" },
      ).catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(TransientPackageError);
    expect(isTransientPackageError(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/dpkg is busy: .*\/srv\/root\/var\/lib\/dpkg\/lock is held by another process .* after waiting 30 s/);
    expect(runner.argvs).toEqual([]);
  });

  it("reads /proc/locks: a POSIX lock on the file's device and inode is held; a waiter's line (->) is not", async () => {
    const dir = freshDir();
    const lock = join(dir, "lock-frontend");
    writeFileSync(lock, "");
    const st = statSync(lock, { bigint: true });
    const major = ((st.dev >> 8n) & 0xfffn).toString(16).padStart(2, "0");
    const minor = (st.dev & 0xffn).toString(16).padStart(2, "0");
    const procLocks = join(dir, "locks");
    writeFileSync(procLocks, `1: POSIX  ADVISORY  WRITE 4242 ${major}:${minor}:${st.ino} 0 EOF\n`);
    expect(await lockHeldInProcLocks(lock, procLocks)).toBe(true);
    writeFileSync(
      procLocks,
      `1: POSIX  ADVISORY  WRITE 4242 ${major}:${minor}:${st.ino + 1n} 0 EOF\n1: -> POSIX  ADVISORY  WRITE 4243 ${major}:${minor}:${st.ino} 0 EOF\n`,
    );
    expect(await lockHeldInProcLocks(lock, procLocks)).toBe(false);
    expect(await lockHeldInProcLocks(join(dir, "missing"), procLocks)).toBe(false);
    expect(procLocksName("2: FLOCK  ADVISORY  WRITE 9 fd:01:77 0 EOF\n", (0xfdn << 8n) | 1n, 77n)).toBe(true);
  });
});

describe("apt's failures", () => {
  const noLocks = { lockHeld: async () => false };

  it.each([
    "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)\n",
    "W: Failed to fetch http://mesh.example/apt/dists/stable/InRelease  Temporary failure resolving 'mesh.example'\n",
    "E: Failed to fetch http://mesh.example/apt/pool/mesh-host_1.1.0_amd64.deb  Could not connect to mesh.example:80\n",
  ])("that pass are transient: %s", async (stderr) => {
    const runner = new RecordingRunner([{ match: ["apt-get", "install"], result: { code: 100, stderr } }]);
    const err = await applyPackage({ runner, root: "/", ...noLocks }, nginx, absent).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientPackageError);
    expect(err).toBeInstanceOf(CommandFailedError);
  });

  it.each([
    "E: Failed to fetch http://mesh.example/apt/pool/main/m/mesh-host/mesh-host_1.0.0_amd64.deb  404  Not Found [IP: 127.0.0.1 80]\n",
    "E: Failed to fetch http://mesh.example/apt/pool/mesh-host_1.0.0_amd64.deb  Hash Sum mismatch\n",
    "E: The repository 'http://mesh.example/apt stable Release' does not have a Release file.\n",
  ])('that say the repository lacks the file for good are not, even inside a "Failed to fetch": %s', async (stderr) => {
    const runner = new RecordingRunner([{ match: ["apt-get", "install"], result: { code: 100, stderr } }]);
    const err = await applyPackage({ runner, root: "/", ...noLocks }, nginx, absent).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect(isTransientPackageError(err)).toBe(false);
  });

  it("are read from stderr only: a maintainer script's words on stdout are not apt's", async () => {
    const runner = new RecordingRunner([
      {
        match: ["apt-get", "install"],
        result: {
          code: 100,
          stdout: "postinst: Could not connect to the license server\n",
          stderr: "E: Sub-process /usr/bin/dpkg returned an error code (1)\n",
        },
      },
    ]);
    const err = await applyPackage({ runner, root: "/", ...noLocks }, nginx, absent).catch((e: unknown) => e);
    expect(isTransientPackageError(err)).toBe(false);
  });

  it("that do not pass (no such package) are not", async () => {
    const runner = new RecordingRunner([
      { match: ["apt-get", "install"], result: { code: 100, stderr: "E: Unable to locate package nginx\n" } },
      { match: ["apt-get", "update"] },
      { match: ["apt-get", "install"], result: { code: 100, stderr: "E: Unable to locate package nginx\n" } },
    ]);
    const err = await applyPackage({ runner, root: "/", ...noLocks }, nginx, absent).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect(isTransientPackageError(err)).toBe(false);
  });
});
