// The installation's rollback step (infra/package/mesh-host-rollback.sh), run as the unit runs it:
// the failed record is in place before BINARY.prev is moved back, so a crash between the two never
// leaves the previous binary back with no record of why.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDirs } from "../testing/temp-dirs";

const SCRIPT = join(__dirname, "../../../../infra/package/mesh-host-rollback.sh");
const freshDir = tempDirs("mesh-rollback-script-");

/** A state dir after an upgrade whose new binary already exited once (so the next exit is its failure), with a folder for shims. */
function upgradedOnce() {
  const dir = freshDir();
  const state = join(dir, "state");
  const shims = join(dir, "bin");
  mkdirSync(state);
  mkdirSync(shims);
  const binary = join(dir, "mesh-host");
  writeFileSync(binary, "new binary\n", { mode: 0o755 });
  writeFileSync(`${binary}.prev`, "old binary\n", { mode: 0o755 });
  writeFileSync(join(state, "upgrade.json"), JSON.stringify({ from: "1.0.0", to: "1.1.0" }));
  writeFileSync(join(state, "upgrade.exited"), "");
  return { dir, state, shims, binary };
}

describe("mesh-host-rollback", () => {
  it("writes upgrade-failed.json before it moves BINARY.prev back", () => {
    const { dir, state, shims, binary } = upgradedOnce();
    // mv as coreutils does, noting whether the failed record stood when .prev was moved.
    const seen = join(dir, "seen");
    writeFileSync(
      join(shims, "mv"),
      `#!/bin/sh\ncase "$2" in *.prev) if [ -f "${state}/upgrade-failed.json" ]; then echo recorded >> "${seen}"; else echo unrecorded >> "${seen}"; fi;; esac\nPATH="${process.env.PATH}" exec mv "$@"\n`,
      { mode: 0o755 },
    );
    const r = spawnSync("sh", [SCRIPT, state, binary], { encoding: "utf8", env: { ...process.env, PATH: `${shims}:${process.env.PATH}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(seen, "utf8")).toBe("recorded\n");
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(JSON.parse(readFileSync(join(state, "upgrade-failed.json"), "utf8"))).toEqual({ from: "1.0.0", to: "1.1.0" });
    expect(existsSync(join(state, "upgrade.json"))).toBe(false);
    expect(existsSync(join(state, "upgrade.exited"))).toBe(false);
    expect(existsSync(join(state, ".upgrade-failed.json.rollback"))).toBe(false);
  });

  it("still moves BINARY.prev back when the failed record cannot be written (a full disk)", () => {
    const { state, shims, binary } = upgradedOnce();
    // cp fails as it does on a full disk.
    writeFileSync(join(shims, "cp"), "#!/bin/sh\necho 'cp: error writing: No space left on device' >&2\nexit 1\n", { mode: 0o755 });
    const r = spawnSync("sh", [SCRIPT, state, binary], { encoding: "utf8", env: { ...process.env, PATH: `${shims}:${process.env.PATH}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(binary, "utf8")).toBe("old binary\n");
    expect(r.stderr).toMatch(/cannot record why the upgrade failed; putting .* back anyway/);
    expect(existsSync(join(state, "upgrade.json"))).toBe(false);
  });
});
