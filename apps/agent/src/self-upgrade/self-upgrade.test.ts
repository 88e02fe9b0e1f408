// Self-upgrade through a whole reconcile: a signed release is put over the binary with
// `.prev` and a breadcrumb; unsigned, mis-signed, mismatched, older and failed releases are refused.
import { createPrivateKey, sign } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { Declaration, hostReleaseMessage, type RemoteSource, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import * as fileSource from "../resources/file-source";
import { sha256Hex } from "../resources/observed";
import { Root } from "../resources/root";
import { reconcile } from "../reconcile/reconcile";
import { RecordingRunner } from "../runner/recording-runner";
import { MemoryStore } from "../store/memory-store";
import { HOST_VERSION } from "../version";
import { compareVersions, refuseRelease } from "./release";
import { SelfUpgrade } from "./self-upgrade";
import { BREADCRUMB_KEY, Breadcrumb, EXITED_KEY, FAILED_KEY } from "./upgrade-files";
import { UpgradeTrial } from "./upgrade-trial";
import { tempDirs } from "../testing/temp-dirs";
import { ManualClock } from "../manual-clock";

const RELEASE = join(__dirname, "..", "..", "..", "..", "infra", "release");
const privateKey = createPrivateKey(readFileSync(join(RELEASE, "TEST-ONLY-release-private-key.pem")));
const publicKey = readFileSync(join(RELEASE, "test-release-public-key.pem"), "utf8");
const signed = (version: string, sha256: string) => sign(null, Buffer.from(hostReleaseMessage(version, sha256)), privateKey).toString("base64");

const freshDir = tempDirs("mesh-upgrade-");
let dir: string;
let binary: string;
let store: MemoryStore;
let served: Map<string, Buffer>;
beforeEach(() => {
  dir = freshDir();
  binary = join(dir, "mesh-host");
  writeFileSync(binary, "old binary\n", { mode: 0o755 });
  store = new MemoryStore();
  served = new Map();
});

function release(version: string, body = `mesh-host ${version}\n`) {
  const bytes = Buffer.from(body);
  const sha256 = sha256Hex(bytes);
  served.set(`/files/${sha256}`, bytes);
  return {
    bytes,
    sha256,
    resource: { type: "host", id: "mesh-host", version, sha256, source: { url: `/files/${sha256}`, sha256 }, signature: signed(version, sha256) } as const,
  };
}

async function apply(resource: ResourceInput, running = "1.0.0") {
  const upgrade = new SelfUpgrade({ store, binary, running, trialMs: 60_000, publicKey, log: silentLogger() });
  const runner = new RecordingRunner([], { code: 0, stdout: "", stderr: "" });
  const outcome = await reconcile(
    { store, root: new Root(dir), log: silentLogger(), enrolled: true, runner, systemdIsPid1: false, selfUpgrade: upgrade },
    { declaration: Declaration.parse({ version: 1, resources: [resource] }) },
  );
  return { outcome, upgrade, runner };
}

// The reconcile's own fetcher needs an enrolled control plane; tests serve sources from memory instead.
vi.spyOn(fileSource, "sourceFetcher").mockImplementation(() => async (source: RemoteSource, into) => {
  const body = served.get(source.url);
  if (!body) throw new Error(`source ${source.url}: HTTP 404`);
  if (sha256Hex(body) !== source.sha256) throw new Error(`source ${source.url}: sha256 differs; not written`);
  await into.write(body);
  return sha256Hex(body);
});

describe("self-upgrade", () => {
  it("puts a signed newer release over the binary, keeps the old one as .prev, leaves a breadcrumb, and runs nothing", async () => {
    const r = release("1.1.0");
    const { outcome, upgrade, runner } = await apply(r.resource);
    expect(outcome.report.errors).toEqual([]);
    expect(readFileSync(binary, "utf8")).toBe("mesh-host 1.1.0\n");
    expect(readFileSync(`${binary}.prev`, "utf8")).toBe("old binary\n");
    expect(upgrade.staged).toEqual({ from: "1.0.0", to: "1.1.0" });
    const crumb = Breadcrumb.parse(JSON.parse((await store.read(BREADCRUMB_KEY))!.toString()));
    expect(crumb).toMatchObject({ from: "1.0.0", to: "1.1.0", sha256: r.sha256, binary });
    // Invariant 5: nothing it ran names its own unit (here it ran nothing at all).
    expect(runner.calls.filter((c) => c.argv.join(" ").includes("mesh-host.service"))).toEqual([]);
  });

  it("refuses a mis-signed release, and an unsigned one, with a clear error and the binary untouched", async () => {
    const r = release("1.1.0");
    const other = release("1.2.0");
    const { outcome } = await apply({ ...r.resource, signature: other.resource.signature });
    expect(outcome.report.errors[0]!.message).toMatch(/signature is not the release key's/);
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(existsSync(`${binary}.prev`)).toBe(false);
    expect(() => Declaration.parse({ version: 1, resources: [{ ...r.resource, signature: undefined }] })).toThrow(/signature/);
  });

  it("refuses a release whose bytes do not match its sha256", async () => {
    const r = release("1.1.0");
    served.set(r.resource.source.url, Buffer.from("tampered\n"));
    const { outcome } = await apply(r.resource);
    expect(outcome.report.errors[0]!.message).toMatch(/sha256/);
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
  });

  it("refuses an older release unless allowDowngrade says so", async () => {
    const r = release("0.9.0");
    const refused = await apply(r.resource);
    expect(refused.outcome.report.errors[0]!.message).toMatch(/older than the running 1\.0\.0.*allowDowngrade/);
    const allowed = await apply({ ...r.resource, allowDowngrade: true });
    expect(allowed.outcome.report.errors).toEqual([]);
    expect(readFileSync(binary, "utf8")).toBe("mesh-host 0.9.0\n");
  });

  it("does not try again a release that was rolled back, and says why", async () => {
    const r = release("1.1.0");
    await store.write(FAILED_KEY, JSON.stringify({ from: "1.0.0", to: "1.1.0", sha256: r.sha256, binary, deadline: new Date().toISOString(), trialMs: 1000 }));
    const { outcome } = await apply(r.resource);
    expect(outcome.report.errors[0]!.message).toMatch(/upgrade to mesh-host 1\.1\.0 failed.*exited before it reached the control plane/);
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
  });

  it("leaves a host already on the declared version alone", async () => {
    const r = release(HOST_VERSION);
    const { outcome, upgrade } = await apply(r.resource, HOST_VERSION);
    expect(outcome.report.errors).toEqual([]);
    expect(outcome.report.owned.map((o) => o.id)).toEqual(["mesh-host"]);
    expect(upgrade.staged).toBeNull();
  });
});

describe("upgrade trial", () => {
  const crumb = (to: string, trialMs = 60_000) =>
    JSON.stringify({ from: "1.0.0", to, sha256: "a".repeat(64), binary, deadline: new Date(Date.now() + trialMs).toISOString(), trialMs });

  /** The rollback renames and writes on the real disk: it ends on its own once its timer fired. */
  const eventually = (done: () => boolean) => vi.waitFor(() => expect(done()).toBe(true));

  it("is kept once the control plane is reached, and its deadline then passes without a rollback", async () => {
    writeFileSync(`${binary}.prev`, "old binary\n");
    writeFileSync(binary, "new binary\n");
    vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") });
    try {
      await store.write(BREADCRUMB_KEY, crumb("1.1.0"));
      const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger()))!;
      await vi.advanceTimersByTimeAsync(30_000);
      await trial.commit();
      await vi.advanceTimersByTimeAsync(3_600_000);
    } finally {
      vi.useRealTimers();
    }
    expect(readFileSync(binary, "utf8")).toBe("new binary\n");
    expect(await store.read(FAILED_KEY)).toBeNull();
  });

  it("is kept once the control plane is reached", async () => {
    await store.write(BREADCRUMB_KEY, crumb("1.1.0"));
    await store.write(EXITED_KEY, "");
    const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger()))!;
    await trial.commit();
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
    expect(await store.read(EXITED_KEY)).toBeNull();
  });

  it("puts .prev back past the deadline and records why", async () => {
    writeFileSync(`${binary}.prev`, "old binary\n");
    writeFileSync(binary, "new binary\n");
    vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") });
    let rolledBack = false;
    try {
      await store.write(BREADCRUMB_KEY, crumb("1.1.0", 60_000));
      const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger()))!;
      void trial.rolledBack.then(() => (rolledBack = true));
      await vi.advanceTimersByTimeAsync(59_999);
      expect(rolledBack).toBe(false);
      expect(readFileSync(binary, "utf8")).toBe("new binary\n");
      await vi.advanceTimersByTimeAsync(1);
    } finally {
      vi.useRealTimers();
    }
    await eventually(() => rolledBack);
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(existsSync(`${binary}.prev`)).toBe(false);
    expect(JSON.parse((await store.read(FAILED_KEY))!.toString()).reason).toMatch(/did not reach the control plane/);
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
  });

  it("records the failure before it puts .prev back: a crash between the two never leaves the old binary with no record of why", async () => {
    writeFileSync(`${binary}.prev`, "old binary\n");
    writeFileSync(binary, "new binary\n");
    await store.write(BREADCRUMB_KEY, crumb("1.1.0", 60_000));
    // What the binary's path held when the failed record was written.
    let binaryAtRecord: string | null = null;
    const write = store.write.bind(store);
    store.write = async (key, data, options) => {
      if (key === FAILED_KEY) binaryAtRecord = readFileSync(binary, "utf8");
      return write(key, data, options);
    };
    const clock = new ManualClock();
    const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger(), clock))!;
    await trial.rollBack("did not reach the control plane");
    expect(binaryAtRecord).toBe("new binary\n");
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(JSON.parse(String(await store.read(FAILED_KEY))).reason).toBe("did not reach the control plane");
  });

  it("puts .prev back even when the failed record cannot be written (a full disk)", async () => {
    writeFileSync(`${binary}.prev`, "old binary\n");
    writeFileSync(binary, "new binary\n");
    await store.write(BREADCRUMB_KEY, crumb("1.1.0", 60_000));
    const write = store.write.bind(store);
    store.write = async (key, data, options) => {
      if (key === FAILED_KEY) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
      return write(key, data, options);
    };
    const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger(), new ManualClock()))!;
    await trial.rollBack("did not reach the control plane");
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
  });

  it("clears a breadcrumb of an upgrade that never took place", async () => {
    await store.write(BREADCRUMB_KEY, crumb("1.1.0"));
    expect(await UpgradeTrial.begin(store, "1.0.0", silentLogger())).toBeNull();
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
  });
});

describe("compareVersions", () => {
  it.each([
    ["1.0.0", "1.0.0", 0],
    ["1.0.1", "1.0.0", 1],
    ["1.2.0", "1.10.0", -1],
    ["1.0.0-rc.1", "1.0.0", -1],
    ["1.0.0-rc.2", "1.0.0-rc.10", -1],
    ["0.1.0.1", "0.1.0", 1],
    ["2.0.0+build.5", "2.0.0", 0],
  ])("%s vs %s is %i", (a, b, want) => expect(compareVersions(a, b)).toBe(want));

  it("refuseRelease names a build with no release key", () => {
    const bytes = Buffer.from("x");
    const sha256 = sha256Hex(bytes);
    expect(
      refuseRelease(
        sha256Hex(bytes),
        { type: "host", id: "h", version: "2.0.0", sha256, signature: signed("2.0.0", sha256), allowDowngrade: false, onDrift: "correct" },
        "1.0.0",
        null,
      ),
    ).toMatch(/no release key/);
  });
});
