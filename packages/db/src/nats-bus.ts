// The change bus on NATS core pub/sub (MESH_BUS_URL=nats://…): one subject per channel,
// published by the committing instance after its commit (bus-outbox.ts), heard by every instance.
import { connect, type NatsConnection } from "nats";
import { z } from "zod";
import { MAX_PAYLOAD_BYTES, type Channel, type ChangeBus } from "./bus";

export const natsUrlSchema = z
  .string()
  .url()
  .refine((u) => new URL(u).protocol === "nats:", "MESH_BUS_URL must be nats://host:port");

/** A payload as it arrives from the wire: text of at most the bus's own limit. */

export interface NatsBus {
  bus: ChangeBus;
  publish(channel: Channel, payload: string): void;
  close(): Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function createNatsBus(url: string, opts: { onError?: (message: string) => void } = {}): Promise<NatsBus> {
  const parsed = new URL(natsUrlSchema.parse(url));
  const nc: NatsConnection = await connect({
    servers: `${parsed.hostname}:${parsed.port || 4222}`,
    user: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    pass: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    name: "mesh-control-plane",
    maxReconnectAttempts: -1,
  });
  /** Subscribers to tell after a reconnect: core pub/sub drops what is sent while disconnected. */
  const gapListeners = new Set<() => void>();
  // disconnects and reconnects are worth a line: core pub/sub drops what is sent meanwhile
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" || s.type === "reconnect" || s.type === "error") opts.onError?.(`bus ${s.type}: ${String(s.data)}`);
      if (s.type === "reconnect") {
        // The client re-subscribes on reconnect; once the server has them, subscribers catch up.
        await nc.flush().catch(() => {});
        for (const onGap of gapListeners) onGap();
      }
    }
  })().catch(() => {});
  return {
    bus: {
      async subscribe(channel, listener, subscribeOpts = {}) {
        const onGap = subscribeOpts.onGap ? () => subscribeOpts.onGap?.() : undefined;
        if (onGap) gapListeners.add(onGap);
        const sub = nc.subscribe(channel, {
          callback: (err, msg) => {
            if (err) return opts.onError?.(`bus ${channel}: ${err.message}`);
            if (msg.data.byteLength > MAX_PAYLOAD_BYTES) return opts.onError?.(`bus ${channel}: payload of ${msg.data.byteLength} bytes dropped`);
            // Bounded above; a decoded payload is a string of at most as many characters as bytes.
            listener(decoder.decode(msg.data));
          },
        });
        // the server has registered the subscription once this round trip returns
        await nc.flush();
        return async () => {
          if (onGap) gapListeners.delete(onGap);
          sub.unsubscribe();
        };
      },
    },
    publish(channel, payload) {
      // Runs after a commit: the caller's change is made, so a closed connection is logged, not thrown.
      try {
        nc.publish(channel, encoder.encode(payload));
      } catch (err) {
        opts.onError?.(`bus publish on ${channel} failed: ${(err as Error).message}`);
      }
    },
    async close() {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}
