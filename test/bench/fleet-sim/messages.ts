// The IPC messages between the bench driver and its worker processes.
// Both sides are this repository's code, started together; no untrusted input crosses here.
export type ToWorker =
  | { type: "link"; base: string; localAddress: string; nodes: { nodeId: string; privateKeyPem: string }[] }
  | { type: "rss" }
  | { type: "stop" };

export type FromWorker =
  | { type: "declaration"; nodeId: string; version: number; at: number }
  | { type: "linked"; nodeId: string; at: number }
  | { type: "unlinked"; nodeId: string }
  | { type: "attempt"; nodeId: string }
  /** Why an attempt did not become a link: "challenge 503", "upgrade 503", "challenge timeout", "refused", … */
  | { type: "failure"; nodeId: string; reason: string };

export type WorkerMessage = { type: "batch"; events: FromWorker[] } | { type: "rss"; kb: number };
