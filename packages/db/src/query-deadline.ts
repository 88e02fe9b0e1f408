// A deadline on each query's whole wait, queue included. The socket's response deadline ends what
// was sent; but while the database is unreachable, postgres.js keeps the queries it could not send
// in its pool's queue and hands them out one per reconnect attempt (each a connect timeout plus a
// growing backoff): measured, the last of 60 queries queued on 4 connections failed after 43 s
// against a 6 s deadline. Past this deadline a query is cancelled (postgres.js's public cancel:
// a queued query leaves the queue at once; a sent one is cancelled on the server). A transaction
// (`begin`, whose BEGIN postgres.js sends through its own inner `unsafe`) and a reserved connection
// (`reserve`) wait in the same queue with no cancel of their own: their caller is answered at the
// deadline, and what arrives later is given back at once (a late transaction body never runs).
import type { ReservedSql, Sql, TransactionSql } from "postgres";

/** The error code a query cancelled this way rejects with (postgres.js's, "canceling statement due to user request"). */
export const QUERY_CANCELLED = "57014";

/** The same client, whose `unsafe` (what drizzle sends every query through), `begin` and `reserve` end a wait longer than `deadlineMs`. */
export function withQueryDeadline(sql: Sql, deadlineMs: number): Sql {
  if (!(deadlineMs > 0)) return sql;
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === "unsafe") return unsafeWithDeadline(target, deadlineMs);
      if (prop === "begin") return beginWithDeadline(target, deadlineMs);
      if (prop === "reserve") return reserveWithDeadline(target, deadlineMs);
      return Reflect.get(target, prop, receiver);
    },
  });
}

function unsafeWithDeadline(target: Sql, deadlineMs: number) {
  return (...args: Parameters<Sql["unsafe"]>) => {
    const query = target.unsafe(...args);
    const timer = setTimeout(() => void query.cancel(), deadlineMs);
    timer.unref();
    // Promise.prototype.then, not the query's own: that would start the query before drizzle sets its mode.
    Promise.prototype.then.call(
      query,
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    return query;
  };
}

/** The error a transaction or reservation still waiting for a connection at the deadline rejects with: the plain query's. */
function waitedPastDeadline(what: string, deadlineMs: number): Error {
  return Object.assign(new Error(`${QUERY_CANCELLED}: canceling statement due to user request (${what} waited ${deadlineMs} ms for a connection)`), {
    code: QUERY_CANCELLED,
  });
}

type Body<T> = (tx: TransactionSql) => T | Promise<T>;

/** A wait for a connection: the caller is told it failed at the deadline; `late` says so to what arrives after. */
function waitDeadline(what: string, deadlineMs: number, reject: (err: Error) => void) {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    reject(waitedPastDeadline(what, deadlineMs));
  }, deadlineMs);
  timer.unref();
  return { late: () => late, clear: () => clearTimeout(timer) };
}

function beginWithDeadline(target: Sql, deadlineMs: number) {
  return <T>(...args: [Body<T>] | [string, Body<T>]) => {
    const options = args.length === 2 ? args[0] : "";
    const body = args.length === 2 ? args[1] : args[0];
    return new Promise((resolve, reject) => {
      const wait = waitDeadline("a transaction", deadlineMs, reject);
      target
        .begin(options, (tx) => {
          wait.clear();
          // Its caller was told it failed: roll back rather than run the body now.
          if (wait.late()) throw waitedPastDeadline("a transaction", deadlineMs);
          return body(tx);
        })
        .then(resolve, (err: unknown) => {
          wait.clear();
          reject(err); // a no-op once the deadline has answered
        });
    });
  };
}

function reserveWithDeadline(target: Sql, deadlineMs: number) {
  return () =>
    new Promise<ReservedSql>((resolve, reject) => {
      const wait = waitDeadline("a reserved connection", deadlineMs, reject);
      target.reserve().then(
        (conn) => {
          wait.clear();
          // Its caller was told it failed: give the connection back to the pool at once.
          if (wait.late()) conn.release();
          else resolve(conn);
        },
        (err: unknown) => {
          wait.clear();
          reject(err);
        },
      );
    });
}
