// Acting on what was observed, not on what stands at the name now: a file swapped (for a symlink
// or another file) between observe and act is neither read, chmodded nor chowned through.
import { mkdirSync, mkdtempSync, promises as fsPromises, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { providerContext } from "../reconcile/provider-context";
import { RecordingRunner } from "../runner/recording-runner";
import { MemoryStore } from "../store/memory-store";
import { directoryProvider } from "./directory";
import { fileProvider } from "./file";
import { sha256Hex } from "./observed";
import { restorePath, snapshotPath } from "./path-state";
import type { ProviderContext } from "./provider";
import { Root } from "./root";

let base: string;
let rootDir: string;
let secret: string;
let ctx: ProviderContext;
const at = (p: string) => join(rootDir, p);
const modeOf = (p: string) => statSync(p).mode & 0o7777;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "mesh-path-state-"));
  rootDir = join(base, "root");
  mkdirSync(join(rootDir, "srv"), { recursive: true });
  secret = join(base, "shadow");
  writeFileSync(secret, "root:secret\n", { mode: 0o600 });
  ctx = providerContext({ root: new Root(rootDir), store: new MemoryStore(), controlPlane: null, resources: [], records: [], runner: new RecordingRunner() });
});
afterEach(() => {
  ctx.paths.close();
  rmSync(base, { recursive: true, force: true });
});

const conf = {
  type: "file" as const,
  id: "conf",
  path: "/srv/app.conf",
  content: "a=1\n",
  encoding: "utf8" as const,
  mode: "0644",
  onDrift: "correct" as const,
};

describe("acting on the observed inode", () => {
  it("a mode fix never follows a symlink swapped in after observing", async () => {
    writeFileSync(at("srv/app.conf"), "a=1\n", { mode: 0o600 });
    const observed = await fileProvider.observe("/srv/app.conf", conf, ctx);
    renameSync(at("srv/app.conf"), at("srv/old"));
    symlinkSync(secret, at("srv/app.conf"));
    await expect(fileProvider.apply(conf, observed, ctx)).rejects.toThrow(/\/srv\/app\.conf is no longer a file .* not followed/);
    expect(modeOf(secret)).toBe(0o600);
  });

  it("a mode fix refuses another file put in its place after observing", async () => {
    writeFileSync(at("srv/app.conf"), "a=1\n", { mode: 0o600 });
    const observed = await fileProvider.observe("/srv/app.conf", conf, ctx);
    writeFileSync(at("srv/other"), "a=1\n", { mode: 0o600 });
    renameSync(at("srv/other"), at("srv/app.conf"));
    await expect(fileProvider.apply(conf, observed, ctx)).rejects.toThrow(/changed while the host was looking at it/);
    expect(modeOf(at("srv/app.conf"))).toBe(0o600);
  });

  it("adoption keeps the bytes it observed, never those of a symlink's target swapped in", async () => {
    writeFileSync(at("srv/app.conf"), "mine\n");
    const observed = (await fileProvider.observe("/srv/app.conf", conf, ctx))!;
    renameSync(at("srv/app.conf"), at("srv/old"));
    symlinkSync(secret, at("srv/app.conf"));
    await expect(snapshotPath(await ctx.hostPath("/srv/app.conf"), observed, ctx)).rejects.toThrow(/no longer a file/);
    // The same inode with other bytes is refused too: what is kept must be what was observed.
    rmSync(at("srv/app.conf"));
    renameSync(at("srv/old"), at("srv/app.conf"));
    const again = (await fileProvider.observe("/srv/app.conf", conf, ctx))!;
    writeFileSync(at("srv/app.conf"), "changed\n");
    await expect(snapshotPath(await ctx.hostPath("/srv/app.conf"), again, ctx)).rejects.toThrow(/changed while the host was taking it over/);
    const original = await snapshotPath(await ctx.hostPath("/srv/app.conf"), (await fileProvider.observe("/srv/app.conf", conf, ctx))!, ctx);
    expect(original).toMatchObject({ kind: "file", blob: sha256Hex("changed\n") });
    expect(readFileSync(secret, "utf8")).toBe("root:secret\n");
  });

  it("purge refuses another directory renamed into its place after observing (say, root's own next door)", async () => {
    const inbox = { type: "directory" as const, id: "inbox", path: "/srv/inbox", mode: "0755", purge: true, onDrift: "correct" as const };
    mkdirSync(at("srv/inbox"));
    writeFileSync(at("srv/inbox/junk"), "");
    mkdirSync(at("srv/secrets"), { mode: 0o700 });
    writeFileSync(at("srv/secrets/key"), "k\n");
    const observed = await directoryProvider.observe("/srv/inbox", inbox, ctx);
    expect(observed).toMatchObject({ type: "directory", unmanaged: 1 });
    renameSync(at("srv/inbox"), at("srv/was-inbox"));
    renameSync(at("srv/secrets"), at("srv/inbox"));
    await expect(directoryProvider.apply(inbox, observed, ctx)).rejects.toThrow(/changed while the host was looking at it/);
    expect(readFileSync(at("srv/inbox/key"), "utf8")).toBe("k\n");
    expect(modeOf(at("srv/inbox"))).toBe(0o700);
  });

  it("a symlink at the path is observed as a symlink, never read through", async () => {
    symlinkSync(secret, at("srv/app.conf"));
    expect(await fileProvider.observe("/srv/app.conf", conf, ctx)).toMatchObject({ type: "symlink", target: secret });
  });

  it("restoring a directory refuses another directory renamed into its place right after mkdir (root's own next door)", async () => {
    mkdirSync(at("srv/secrets"), { mode: 0o700 });
    writeFileSync(at("srv/secrets/key"), "k\n");
    const mkdir = fsPromises.mkdir.bind(fsPromises);
    // The race, made certain: as soon as the host has made the directory, a user who can write srv swaps root's in.
    const spy = vi.spyOn(fsPromises, "mkdir").mockImplementation(async (...args: Parameters<typeof fsPromises.mkdir>) => {
      const made = await mkdir(...args);
      renameSync(at("srv/inbox"), at("srv/was-inbox"));
      renameSync(at("srv/secrets"), at("srv/inbox"));
      return made;
    });
    try {
      const original = { kind: "directory" as const, mode: "0777", uid: 1234, gid: 1234 };
      await expect(restorePath(await ctx.hostPath("/srv/inbox"), "/srv/inbox", original, ctx)).rejects.toThrow(
        /replaced by another directory right after the host made it/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(readFileSync(at("srv/inbox/key"), "utf8")).toBe("k\n");
    expect(modeOf(at("srv/inbox"))).toBe(0o700);
    expect(statSync(at("srv/inbox")).uid).toBe(0);
  });
});
