// Counts the statements a component sends to its database, at the handle, whatever the engine:
// for tests that bound how many queries a fleet-wide path costs.
import type { Deps } from "../deps";

/** Statements the gateway sends to its database: counted at the handle, whatever the engine. */
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
