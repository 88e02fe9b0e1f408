// Who is calling: the admin API key (Authorization: Bearer) or a dashboard
// session cookie. Returns the actor name, or null for nobody.
import type { DbOrTx } from "@mesh/db";
import { apiKeyMatches, readSetting, SETTING } from "./credentials";
import { readCookie, SESSION_COOKIE, sessionUser } from "./sessions";

export async function authenticate(db: DbOrTx, headers: Headers): Promise<string | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const m = /^Bearer\s+(\S{1,256})$/i.exec(authorization);
    const stored = await readSetting(db, SETTING.apiKey);
    if (m && stored && apiKeyMatches(m[1]!, stored)) return "api-key";
    return null;
  }
  const session = readCookie(headers.get("cookie"), SESSION_COOKIE);
  return session ? sessionUser(db, session) : null;
}
