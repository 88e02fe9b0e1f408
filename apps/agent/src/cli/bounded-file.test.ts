import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBoundedFile } from "./bounded-file";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bounded-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("readBoundedFile", () => {
  it("reads a regular file within the limit through one handle", async () => {
    fs.writeFileSync(path.join(dir, "ok"), "abc");
    expect(await readBoundedFile(path.join(dir, "ok"), 3)).toEqual({ ok: true, text: "abc" });
  });

  it("refuses a file over the limit, a directory and a FIFO (without hanging on it)", async () => {
    fs.writeFileSync(path.join(dir, "big"), "abcd");
    expect(await readBoundedFile(path.join(dir, "big"), 3)).toEqual({ ok: false, problem: "too large" });
    expect(await readBoundedFile(dir, 3)).toEqual({ ok: false, problem: "not a regular file" });
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [path.join(dir, "fifo")]);
    expect(await readBoundedFile(path.join(dir, "fifo"), 3)).toEqual({ ok: false, problem: "not a regular file" });
  });
});
