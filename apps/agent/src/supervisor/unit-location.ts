// Where a unit's file is found under a root, in systemd's order of precedence, and
// what enablement means without systemd: the same .wants/.requires links systemctl makes.
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isUnitName, parseUnitName } from "@mesh/protocol";
import { openOwnDir, SafePaths } from "../resources/safe-path";
import { readUnitFileAt } from "../resources/service";
import { parseUnitFile, type UnitSpec } from "./unit-file";
import { UnitFileError } from "./unit-syntax";

/** systemd's search path for system units, highest precedence first. */
const UNIT_DIRS = ["/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"];
const LINK_DIR = "/etc/systemd/system";

export interface UnitFileFound {
  /** The path as the machine names it, e.g. /etc/systemd/system/web.service. */
  path: string;
  /** The file's text, or null when the unit is masked (a link to /dev/null). */
  text: string | null;
}

export async function findUnitFile(rootDir: string, unit: string): Promise<UnitFileFound | null> {
  const own = await findFile(rootDir, unit);
  if (own) return own;
  // An instance (foo@bar.service) without a file of its own runs from its template (foo@.service).
  const parts = parseUnitName(unit);
  return parts?.instance ? findFile(rootDir, `${parts.prefix}@.${parts.type}`) : null;
}

async function findFile(rootDir: string, unit: string): Promise<UnitFileFound | null> {
  for (const dir of UNIT_DIRS) {
    const path = join(dir, unit);
    const found = await readUnitFileAt(join(rootDir, path));
    if (!found) continue;
    if (found.kind === "file") return { path, text: found.content };
    if (found.target === "/dev/null") return { path, text: null };
    // Any other link (to a file elsewhere, as systemctl link makes) is read through.
    const text = await fs.readFile(join(rootDir, path), "utf8").catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
    if (text !== null) return { path, text };
  }
  return null;
}

/** The unit, parsed for running without systemd; a clear error when it cannot be found or run. */
export async function loadUnit(rootDir: string, unit: string): Promise<UnitSpec> {
  const found = await findUnitFile(rootDir, unit);
  if (!found) throw new Error(`unit ${unit} not found (no file under ${UNIT_DIRS.join(", ")})`);
  if (found.text === null) throw new Error(`unit ${unit} is masked`);
  if (unit.endsWith("@.service")) throw new Error(`unit ${unit} is a template; run an instance of it, such as ${unit.replace("@.service", "@NAME.service")}`);
  return parseUnitFile(unit, found.text);
}

/** What `systemctl is-enabled` would say, from the unit file and the links beside it. */
export async function enablement(rootDir: string, unit: string): Promise<string> {
  const found = await findUnitFile(rootDir, unit);
  if (!found) return "not-found";
  if (found.text === null) return "masked";
  if ((await existingLinks(rootDir, unit)).length) return "enabled";
  let spec: UnitSpec | null = null;
  try {
    spec = parseUnitFile(unit, found.text);
  } catch (err) {
    if (!(err instanceof UnitFileError)) throw err;
  }
  return spec && !spec.hasInstall ? "static" : "disabled";
}

/** The links [Install] asks for: TARGET.wants/UNIT (WantedBy) and TARGET.requires/UNIT (RequiredBy). */
export async function enableUnit(rootDir: string, unit: string): Promise<void> {
  const found = await findUnitFile(rootDir, unit);
  if (!found) throw new Error(`unit ${unit} not found`);
  if (found.text === null) throw new Error(`unit ${unit} is masked; cannot enable it`);
  const spec = parseUnitFile(unit, found.text);
  for (const target of [...spec.wantedBy, ...spec.requiredBy]) {
    // A unit name, never a path: the links stay inside /etc/systemd/system.
    if (!isUnitName(target)) throw new Error(`unit ${unit}: [Install] names ${JSON.stringify(target)}, which is not a unit name`);
  }
  const links = [...spec.wantedBy.map((t) => `${t}.wants`), ...spec.requiredBy.map((t) => `${t}.requires`)];
  if (!links.length) throw new Error(`unit ${unit} has no WantedBy= or RequiredBy= in [Install]; there is nothing to enable it into`);
  for (const dir of links) {
    // Made and written through descriptors reached safely from the root (resources/safe-path.ts).
    const own = openOwnDir(rootDir, `${LINK_DIR}/${dir}`, 0o755);
    try {
      const link = own.at(unit);
      await fs.rm(link, { force: true });
      await fs.symlink(found.path, link);
    } finally {
      own.close();
    }
  }
}

/** Every .wants/.requires link to the unit goes, whatever made it. */
export async function disableUnit(rootDir: string, unit: string): Promise<void> {
  for (const link of await existingLinks(rootDir, unit)) {
    const paths = new SafePaths(rootDir);
    try {
      // Unlinked through its directory's descriptor; rm never follows the link itself.
      const at = await paths.hostPath(`${LINK_DIR}/${basename(dirname(link))}/${unit}`);
      await fs.rm(at, { force: true });
      // An emptied TARGET.wants goes too, so leaving leaves /etc/systemd/system as it was.
      await fs.rmdir(await paths.hostPath(`${LINK_DIR}/${basename(dirname(link))}`)).catch(() => undefined);
    } finally {
      paths.close();
    }
  }
}

async function existingLinks(rootDir: string, unit: string): Promise<string[]> {
  const base = join(rootDir, LINK_DIR);
  let entries: string[];
  try {
    entries = await fs.readdir(base);
  } catch {
    return [];
  }
  const links: string[] = [];
  for (const dir of entries.filter((e) => e.endsWith(".wants") || e.endsWith(".requires"))) {
    const link = join(base, dir, unit);
    try {
      await fs.lstat(link);
      links.push(link);
    } catch {
      // not linked from this target
    }
  }
  return links;
}
