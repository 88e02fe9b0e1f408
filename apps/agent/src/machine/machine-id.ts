// The machine id: /etc/machine-id, else dbus's copy, else one generated once and
// kept in the state dir. Read under --root so that hosts sharing a box in tests differ.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { join } from "node:path";
import type { Store } from "../store/store";
import { KEYS } from "../state-dir/keys";

const MACHINE_ID = /^[0-9a-f]{32}$/;

export async function machineId(root: string, store: Store): Promise<string> {
  for (const p of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
    const id = await fs.readFile(join(root, p), "utf8").then(
      (s) => s.trim(),
      () => "",
    );
    if (MACHINE_ID.test(id)) return id;
  }
  const kept = (await store.read(KEYS.machineId))?.toString("utf8").trim() ?? "";
  if (MACHINE_ID.test(kept)) return kept;
  const made = randomBytes(16).toString("hex");
  await store.write(KEYS.machineId, made + "\n", { mode: 0o644 });
  return made;
}
