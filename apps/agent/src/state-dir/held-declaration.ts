// The last good declaration, kept in the state dir so that a host without a
// link (or after a restart) keeps reconciling towards it.
import { Declaration } from "@mesh/protocol";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import { KEYS } from "./keys";

export async function loadHeldDeclaration(store: Store, log: Logger): Promise<Declaration | null> {
  const raw = await store.read(KEYS.declaration);
  if (!raw) return null;
  try {
    const parsed = Declaration.safeParse(JSON.parse(raw.toString("utf8")));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through: an unreadable declaration is as good as none; the control plane sends it again.
  }
  log.error({ file: KEYS.declaration }, "held declaration is unreadable; waiting for the control plane to send it again");
  return null;
}

export async function saveHeldDeclaration(store: Store, declaration: Declaration): Promise<void> {
  await store.write(KEYS.declaration, JSON.stringify(declaration) + "\n");
}
