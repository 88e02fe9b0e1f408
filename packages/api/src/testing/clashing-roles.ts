// Four roles the compile tests share: one for every node, one for `tier=web`, and two that clash on `/c` for
// `clash=yes` (a conflicted node).
import type { Deps } from "../deps";
import { upsertRole } from "../services/roles";

export async function seedClashingRoles(deps: Pick<Deps, "db" | "log">): Promise<void> {
  await upsertRole(deps as Deps, { actor: "test", input: { name: "base", resources: [{ type: "directory", id: "base", path: "/srv/base" }] } });
  await upsertRole(deps as Deps, {
    actor: "test",
    input: { name: "web", selector: { labels: { tier: "web" } }, resources: [{ type: "file", id: "site", path: "/srv/site", content: "hello" }] },
  });
  for (const [name, content] of [
    ["clash-a", "a"],
    ["clash-b", "b"],
  ] as const) {
    await upsertRole(deps as Deps, {
      actor: "test",
      input: { name, selector: { labels: { clash: "yes" } }, resources: [{ type: "file", id: "c", path: "/c", content }] },
    });
  }
}
