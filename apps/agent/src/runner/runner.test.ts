// The real runner against real programs (argv reaches them untouched, timeouts take the
// whole process group, output stays bounded) and the recording runner tests rely on.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ProcessRunner } from "./process-runner";
import { RecordingRunner } from "./recording-runner";
import { CommandFailedError, MAX_OUTPUT_BYTES, runOrThrow } from "./runner";

const runner = new ProcessRunner();

/** Running, not merely a zombie waiting for a PID 1 that may never reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("ProcessRunner", () => {
  it("passes each argv element as one argument, with no shell to interpret it", async () => {
    const tricky = "$(touch /tmp/mesh-should-not-exist); `id` && echo *";
    const result = await runner.run(["printf", "%s|", tricky, "two words"]);
    expect(result).toEqual({ code: 0, signal: null, timedOut: false, stdout: `${tricky}|two words|`, stderr: "" });
  });

  it("reports a non-zero exit with its stderr as a result, not a rejection", async () => {
    const result = await runner.run(["sh", "-c", "echo out; echo oops >&2; exit 3"]);
    expect(result).toMatchObject({ code: 3, stdout: "out\n", stderr: "oops\n", timedOut: false });
  });

  it("writes input to stdin, and gives /dev/null when there is none so nothing waits for a prompt", async () => {
    expect((await runner.run(["cat"], { input: "hello\n" })).stdout).toBe("hello\n");
    expect(await runner.run(["cat"])).toMatchObject({ code: 0, stdout: "" });
  });

  it("adds env to the host's own environment", async () => {
    const result = await runner.run(["sh", "-c", 'echo "$MESH_TEST_VAR:${PATH:+path}"'], { env: { MESH_TEST_VAR: "x" } });
    expect(result.stdout).toBe("x:path\n");
  });

  it("kills the whole process group on timeout and says so", async () => {
    const started = Date.now();
    // The child starts a grandchild and prints its pid: a timeout must take both.
    const result = await runner.run(["sh", "-c", "sleep 30 & echo $!; wait"], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.code).toBeNull();
    expect(result.signal).toBe("SIGTERM");
    expect(Date.now() - started).toBeLessThan(5_000);
    const grandchild = Number(result.stdout.trim());
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(grandchild)).toBe(false);
  });

  it("keeps only the last 64 KiB of output", async () => {
    const script = `process.stdout.write("a".repeat(300000) + "END"); process.stderr.write("b".repeat(100000))`;
    const result = await runner.run([process.execPath, "-e", script]);
    expect(result.stdout.length).toBe(MAX_OUTPUT_BYTES);
    expect(result.stdout.endsWith("aaaEND")).toBe(true);
    expect(result.stderr.length).toBe(MAX_OUTPUT_BYTES);
  });

  it("rejects when the program cannot be started", async () => {
    await expect(runner.run(["mesh-no-such-program-here"])).rejects.toThrow("cannot run mesh-no-such-program-here: ENOENT");
    await expect(runner.run([])).rejects.toThrow("empty argv");
  });

  it("runOrThrow names the command, how it ended and its last words", async () => {
    const err = await runOrThrow(runner, ["sh", "-c", "echo first >&2; echo 'it broke' >&2; exit 2"], {}, "cannot do it").catch((e) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect(err.message).toBe("cannot do it: `sh -c echo first >&2; echo 'it broke' >&2; exit 2` exited 2: first / it broke");
    expect(err.result.code).toBe(2);
  });
});

describe("RecordingRunner", () => {
  it("records every argv and answers from the script by prefix, each answer once unless repeated", async () => {
    const fake = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "first" } },
      { match: ["dpkg-query"], result: { code: 1, stderr: "second" } },
      { match: (argv) => argv[0] === "apt-get", result: { stdout: "apt" }, repeat: true },
      { match: ["systemctl", "start"], error: "cannot run systemctl: ENOENT" },
    ]);
    expect(await fake.run(["dpkg-query", "-W", "x"])).toEqual({ code: 0, stdout: "first", stderr: "", signal: null, timedOut: false });
    expect(await fake.run(["dpkg-query", "-W", "y"])).toMatchObject({ code: 1, stderr: "second" });
    expect((await fake.run(["apt-get", "install"])).stdout).toBe("apt");
    expect((await fake.run(["apt-get", "update"])).stdout).toBe("apt");
    await expect(fake.run(["systemctl", "start", "a.service"])).rejects.toThrow("ENOENT");
    await expect(fake.run(["dpkg-query", "-W", "z"])).rejects.toThrow("no scripted answer for `dpkg-query -W z`");
    expect(fake.argvs).toEqual([
      ["dpkg-query", "-W", "x"],
      ["dpkg-query", "-W", "y"],
      ["apt-get", "install"],
      ["apt-get", "update"],
      ["systemctl", "start", "a.service"],
      ["dpkg-query", "-W", "z"],
    ]);
  });

  it("answers unscripted calls with `otherwise` when given, and keeps the options each call had", async () => {
    const fake = new RecordingRunner([], { code: 0, stdout: "ok" });
    expect((await fake.run(["true"], { timeoutMs: 5, env: { A: "1" } })).stdout).toBe("ok");
    expect(fake.calls).toEqual([{ argv: ["true"], opts: { timeoutMs: 5, env: { A: "1" } } }]);
  });
});
