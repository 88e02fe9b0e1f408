// Fail points for crash and race tests: MESH_FAILPOINT=<step>[:<n>] makes the host SIGKILL (or,
// with MESH_FAILPOINT_ACTION=stop, SIGSTOP) itself at the n-th hit of a named step. Unset, a hit costs one comparison.
import { z } from "zod";

/** The named steps, in the order a reconcile meets them (listed in the agent README). */
export const FAILPOINTS = [
  "intents-resolved",
  "snapshot-written",
  "intent-written",
  "before-apply",
  "temp-written",
  "host-package-installed",
  "applied-before-record",
  "remove-before-record",
  "record-written",
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

const Setting = z
  .string()
  .regex(/^[a-z-]+(:[1-9][0-9]{0,6})?$/)
  .transform((s) => {
    const [name, n] = s.split(":");
    return { name: name!, n: n ? Number(n) : 1 };
  })
  .refine((s) => (FAILPOINTS as readonly string[]).includes(s.name), "not a known fail point");

let armed: { name: string; n: number } | null | undefined;
/** A stopped host waits, as observed, until the test has changed the machine under it and sent SIGCONT. */
let signal: "SIGKILL" | "SIGSTOP" = "SIGKILL";
let hits = 0;

export function failpoint(name: Failpoint): void {
  if (armed === undefined) {
    const raw = process.env.MESH_FAILPOINT;
    const parsed = raw ? Setting.safeParse(raw) : null;
    if (raw && !parsed?.success) process.stderr.write(`mesh-host: MESH_FAILPOINT=${raw} ignored: not <step>[:<n>] with a known step\n`);
    armed = parsed?.success ? parsed.data : null;
    signal = process.env.MESH_FAILPOINT_ACTION === "stop" ? "SIGSTOP" : "SIGKILL";
  }
  if (!armed || armed.name !== name) return;
  if (++hits === armed.n) process.kill(process.pid, signal);
}
