import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_LOG_BYTES, rotateLog } from "./process-group";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-log-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("rotateLog", () => {
  it("keeps a log under its cap: the old text moves to .1 and the log is emptied in place", () => {
    const log = path.join(dir, "a.log");
    fs.writeFileSync(log, Buffer.alloc(MAX_LOG_BYTES + 1, 0x61));
    const ino = fs.statSync(log).ino;
    rotateLog(log);
    expect(fs.statSync(log)).toMatchObject({ size: 0, ino });
    expect(fs.statSync(`${log}.1`).size).toBe(MAX_LOG_BYTES + 1);
  });

  it("leaves a log under its cap alone, and never follows a log that is a symlink", () => {
    const small = path.join(dir, "b.log");
    fs.writeFileSync(small, "hello\n");
    rotateLog(small);
    expect(fs.readFileSync(small, "utf8")).toBe("hello\n");
    const target = path.join(dir, "precious");
    fs.writeFileSync(target, Buffer.alloc(MAX_LOG_BYTES + 1, 0x62));
    fs.symlinkSync(target, path.join(dir, "c.log"));
    rotateLog(path.join(dir, "c.log"));
    expect(fs.statSync(target).size).toBe(MAX_LOG_BYTES + 1);
    expect(fs.existsSync(path.join(dir, "c.log.1"))).toBe(false);
  });
});
