// The last good declaration, kept in the state dir so that a host without a
// link (or after a restart) keeps reconciling towards it.
import { Declaration } from "@mesh/protocol";
import type { Logger } from "../log";
import { parseJson } from "../store/read-json";
import type { Store } from "../store/store";
import { KEYS } from "./keys";

export async function loadHeldDeclaration(store: Store, log: Logger): Promise<Declaration | null> {
  const raw = await store.read(KEYS.declaration);
  if (!raw) return null;
  const held = parseJson(raw, Declaration);
  if (held) return held;
  // An unreadable declaration is as good as none; the control plane sends it again.
  log.error({ file: KEYS.declaration }, "held declaration is unreadable; waiting for the control plane to send it again");
  return null;
}

export async function saveHeldDeclaration(store: Store, declaration: Declaration): Promise<void> {
  await store.write(KEYS.declaration, JSON.stringify(declaration) + "\n");
}
