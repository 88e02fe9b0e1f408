// A deadline on each query's whole wait, queue included. The socket's response deadline ends what
// was sent; but while the database is unreachable, postgres.js keeps the queries it could not send
// in its pool's queue and hands them out one per reconnect attempt (each a connect timeout plus a
// growing backoff): measured, the last of 60 queries queued on 4 connections failed after 43 s
// against a 6 s deadline. Past this deadline a query is cancelled (postgres.js's public cancel:
// a queued query leaves the queue at once; a sent one is cancelled on the server).
import type { Sql } from "postgres";

/** The error code a query cancelled this way rejects with (postgres.js's, "canceling statement due to user request"). */
export const QUERY_CANCELLED = "57014";

/** The same client, whose `unsafe` (what drizzle sends every query through) cancels a query still waiting after `deadlineMs`. */
export function withQueryDeadline(sql: Sql, deadlineMs: number): Sql {
  if (!(deadlineMs > 0)) return sql;
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop !== "unsafe") return Reflect.get(target, prop, receiver);
      return (...args: Parameters<Sql["unsafe"]>) => {
        const query = target.unsafe(...args);
        const timer = setTimeout(() => void query.cancel(), deadlineMs);
        timer.unref();
        // Promise.prototype.then, not the query's own: that would start the query before drizzle sets its mode.
        Promise.prototype.then.call(query, () => clearTimeout(timer), () => clearTimeout(timer));
        return query;
      };
    },
  });
}
