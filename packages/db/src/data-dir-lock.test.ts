// The data-dir lock is the kernel's: refused to any second open of the lock file, whatever PID
// the file names, and gone with the process that held it, even one killed with SIGKILL.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DataDirLockedError, LOCK_FILE, lockDataDir } from "./data-dir-lock";

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "mesh-lock-"));
const lockModule = fileURLToPath(new URL("./data-dir-lock.ts", import.meta.url));

describe("data directory lock", () => {
  it("refuses a second holder, naming the first, and frees the lock on release", () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by another process \\(process ${process.pid} on `));
    release();
    lockDataDir(dir)();
    fs.rmSync(dir, { recursive: true });
  });

  it("is not blocked by a lock file naming a live process that does not hold the lock (a reused PID)", () => {
    const dir = tempDir();
    // The parent is alive: a PID-file lock took that for a holder and refused for good.
    fs.writeFileSync(path.join(dir, LOCK_FILE), `pid ${process.ppid} on ${os.hostname()}\n`);
    const release = lockDataDir(dir);
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")).toBe(`pid ${process.pid} on ${os.hostname()}\n`);
    release();
    fs.writeFileSync(path.join(dir, LOCK_FILE), String(process.ppid));
    lockDataDir(dir)();
    fs.rmSync(dir, { recursive: true });
  });

  it("is freed by the kernel when its holder is killed with SIGKILL", async () => {
    const dir = tempDir();
    const holder = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { lockDataDir } from ${JSON.stringify(lockModule)}; lockDataDir(${JSON.stringify(dir)}); console.log("locked"); setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on("data", (d) => String(d).includes("locked") && resolve());
      holder.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
    });
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`process ${holder.pid} on `));
    const gone = new Promise((r) => holder.once("exit", r));
    holder.kill("SIGKILL");
    await gone;
    lockDataDir(dir)();
    fs.rmSync(dir, { recursive: true });
  });
});
