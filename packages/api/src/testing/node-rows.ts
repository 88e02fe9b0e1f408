// Enrolled nodes written straight into the database (no token, no key, no compile): for tests of what
// happens to many nodes at once, where enrolling each through the service would be most of the test.
import { nodes } from "@mesh/db";
import type { Deps } from "../deps";
import { emptyInventory, testProfile } from "./host-facts";

/**
 * `n` enrolled nodes named `<group>-<i>` and labelled `group=<group>`, the first `linked` of them held
 * by gateway "gw"; their ids in id order.
 */
export async function insertTestNodes(deps: Pick<Deps, "db">, group: string, n: number, linked = 0): Promise<string[]> {
  const rows = await deps.db
    .insert(nodes)
    .values(
      Array.from({ length: n }, (_, i) => ({
        name: `${group}-${i}`,
        state: "enrolled" as const,
        labels: { group },
        publicKey: `k-${group}-${i}`,
        machineId: `m-${group}-${i}`,
        profile: testProfile(`m-${group}-${i}`),
        inventory: emptyInventory(),
        gatewayId: i < linked ? "gw" : null,
      })),
    )
    .returning({ id: nodes.id });
  return rows.map((r) => r.id).sort();
}
