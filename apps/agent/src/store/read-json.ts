// Reading one of the host's JSON files with its schema: a missing, truncated, foreign or
// hand-damaged file reads as none (null), and each caller says what none means for it.
import type { z } from "zod";
import type { Store } from "./store";

/** The value in `raw` when it is JSON that `schema` accepts, else null. */
export function parseJson<T>(raw: Buffer | string | null | undefined, schema: z.ZodType<T>): T | null {
  if (raw === null || raw === undefined) return null;
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === "string" ? raw : raw.toString("utf8"));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** The store's `key` read with `schema`; null when it is absent or does not parse. */
export async function readJson<T>(store: Store, key: string, schema: z.ZodType<T>): Promise<T | null> {
  return parseJson(await store.read(key), schema);
}
