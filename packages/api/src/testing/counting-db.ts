// A database handle that counts the statements issued through it (select, insert, update,
// delete, execute; a transaction counts once): for tests that bound a path's round trips.
import type { Deps } from "../deps";

export function countingDb(db: Deps["db"]): { db: Deps["db"]; count: () => number } {
  let n = 0;
  const counted = new Set(["select", "selectDistinct", "insert", "update", "delete", "execute", "transaction"]);
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop === "string" && counted.has(prop) && typeof value === "function") {
        return (...args: unknown[]) => {
          n++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value;
    },
  });
  return { db: proxy, count: () => n };
}
