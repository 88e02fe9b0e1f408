// Observing many subjects, a few at a time (dpkg-query and systemctl calls overlap),
// where a subject that cannot be observed is an error for it alone.
import type { Resource, ResourceType } from "@mesh/protocol";
import { reasonOf } from "../host-error";
import type { ProviderContext } from "../resources/provider";
import { providerFor, subjectKey } from "../resources/providers";
import type { Observation } from "./planner";

const AT_ONCE = 16;

export async function observeOne(type: ResourceType, subject: string, resource: Resource | null, ctx: ProviderContext): Promise<Observation> {
  try {
    return { state: await providerFor(type).observe(subjectKey(subject), resource, ctx) };
  } catch (err) {
    return { error: reasonOf(err) };
  }
}

export async function observeSubjects(
  wanted: readonly { type: ResourceType; subject: string; resource: Resource | null }[],
  ctx: ProviderContext,
  into: Map<string, Observation>,
): Promise<void> {
  const todo = wanted.filter((w) => !into.has(w.subject));
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const w = todo[next++]!;
      into.set(w.subject, await observeOne(w.type, w.subject, w.resource, ctx));
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, todo.length) }, worker));
}
