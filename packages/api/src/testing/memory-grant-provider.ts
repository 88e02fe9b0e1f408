// A grant provider held in memory: principal -> credential, like a database holds roles;
// fails while `down`. For tests of the grant logic behind the GrantProvider interface.
import { randomBytes } from "node:crypto";
import type { GrantProvider } from "../grants/provider";

export function memoryGrantProvider() {
  const held = new Map<string, string>();
  let down = false;
  const provider: GrantProvider = {
    name: "postgres",
    mint: (principal) => `DATABASE_URL=postgres://${principal}:${randomBytes(24).toString("base64url")}@db/app\n`,
    async issue(principal, _grant, credential) {
      if (down) throw new Error("provider unreachable");
      held.set(principal, credential);
    },
    async revoke(principal) {
      if (down) throw new Error("provider unreachable");
      held.delete(principal);
    },
    list: async () => [...held.keys()],
  };
  return { provider, held, setDown: (d: boolean) => (down = d) };
}
