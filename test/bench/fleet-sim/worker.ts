// A worker process holding many simulated links over one loopback source address;
// it takes identities from the parent over IPC and streams link and declaration events back.
import { createPrivateKey } from "node:crypto";
import fs from "node:fs";
import { SimNode } from "./sim-node";
import type { ToWorker, FromWorker } from "./messages";

const nodes = new Map<string, SimNode>();
let batch: FromWorker[] = [];
const send = (m: FromWorker) => {
  batch.push(m);
  if (batch.length >= 500) flush();
};
const flush = () => {
  if (!batch.length) return;
  process.send!({ type: "batch", events: batch });
  batch = [];
};
setInterval(flush, 50).unref();

process.on("message", (msg: ToWorker) => {
  if (msg.type === "link") {
    for (const n of msg.nodes) {
      const node = new SimNode(n.nodeId, createPrivateKey(n.privateKeyPem), msg.base, msg.localAddress, {
        declaration: (nodeId, version, at) => send({ type: "declaration", nodeId, version, at }),
        linked: (nodeId, at) => send({ type: "linked", nodeId, at }),
        unlinked: (nodeId) => send({ type: "unlinked", nodeId }),
        attempt: (nodeId) => send({ type: "attempt", nodeId }),
        failure: (nodeId, reason) => send({ type: "failure", nodeId, reason }),
      });
      nodes.set(n.nodeId, node);
      node.start();
    }
  } else if (msg.type === "rss") {
    process.send!({ type: "rss", kb: Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))![1]) });
  } else if (msg.type === "stop") {
    for (const n of nodes.values()) n.stop();
    flush();
    setTimeout(() => process.exit(0), 100);
  }
});
process.on("disconnect", () => process.exit(0));
