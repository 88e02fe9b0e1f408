// Test support: a Link to a test control plane with a fresh key, events that do nothing unless a
// test names them, and a silent log.
import { generateKeyPairSync } from "node:crypto";
import { silentLogger } from "../log";
import { Link, type LinkEvents, type LinkOptions } from "./link";

export function testLink(controlPlaneUrl: string, events: Partial<LinkEvents> = {}, options: Partial<LinkOptions> = {}): Link {
  const noop = () => {};
  return new Link(
    {
      controlPlaneUrl,
      nodeId: "6a1f0d2e-7c2b-4b8e-9f3a-1d2c3b4a5f60",
      privateKey: generateKeyPairSync("ed25519").privateKey,
      hostVersion: "test",
      log: silentLogger(),
      timeoutMs: 45_000,
      ...options,
    },
    {
      declarationVersion: () => 0,
      onOpen: noop,
      onClose: noop,
      onDeclaration: noop,
      onRejectedDeclaration: noop,
      onAck: noop,
      onRevoked: noop,
      onRetired: noop,
      onReconcile: noop,
      ...events,
    },
  );
}
