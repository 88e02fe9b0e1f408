// The after-commit outbox for buses outside the database (NATS): notify() inside a
// transaction queues here, and the queue is published only once the outermost transaction commits.
import type { Channel } from "./bus";

export type Publish = (channel: Channel, payload: string) => void;
type Notification = [Channel, string];

/**
 * Transaction handle -> its pending notifications; a database handle -> its direct publisher.
 * Kept on globalThis: the Next.js bundle holds its own copy of this module, and the handles
 * server.ts made must be recognised by both copies.
 */
const shared = globalThis as typeof globalThis & { [key: symbol]: unknown };
const OUTBOXES = Symbol.for("mesh.bus.outboxes");
const PUBLISHERS = Symbol.for("mesh.bus.publishers");
const outboxes = (shared[OUTBOXES] ??= new WeakMap<object, Notification[]>()) as WeakMap<object, Notification[]>;
const publishers = (shared[PUBLISHERS] ??= new WeakMap<object, Publish>()) as WeakMap<object, Publish>;

type Transactional = { transaction: (fn: (tx: never) => Promise<unknown>, config?: unknown) => Promise<unknown> };

/** Queues the notification if handle is an outboxed transaction; sends it if handle is an outboxed database. False otherwise. */
export function queueNotification(handle: object, channel: Channel, payload: string): boolean {
  const outbox = outboxes.get(handle);
  if (outbox) {
    outbox.push([channel, payload]);
    return true;
  }
  const publish = publishers.get(handle);
  if (publish) {
    publish(channel, payload);
    return true;
  }
  return false;
}

/** Makes notify() on db (and on every transaction it opens, nested ones too) go to publish, after commit. */
export function useOutbox(db: object, publish: Publish): void {
  publishers.set(db, publish);
  wrapTransactions(db, (notifications) => {
    for (const [channel, payload] of notifications) publish(channel, payload);
  });
}

function wrapTransactions(handle: object, onCommit: (notifications: Notification[]) => void): void {
  const target = handle as Transactional;
  const original = target.transaction.bind(handle);
  target.transaction = async (fn, config) => {
    const outbox: Notification[] = [];
    // A retried or rolled-back transaction throws before onCommit, so its notifications are dropped.
    const result = await original(async (tx: object) => {
      outboxes.set(tx, outbox);
      // a savepoint's notifications join its parent's only if the savepoint is released
      wrapTransactions(tx, (inner) => outbox.push(...inner));
      return fn(tx as never);
    }, config);
    onCommit(outbox);
    return result;
  };
}
