// Profile (what a machine can run) and inventory (what it has), sent at enrolment
// and again when they change.
import { z } from "zod";
import { LIMITS } from "./limits";

const short = z.string().max(256);

export const HostInstall = z.enum(["deb", "tarball", "script"]);
export type HostInstall = z.infer<typeof HostInstall>;

export const Profile = z.strictObject({
  hostname: short,
  os: short,
  osRelease: short,
  osVersionId: short,
  kernel: short,
  arch: short,
  cpus: z.number().int().min(0).max(1_000_000),
  memoryBytes: z.number().int().min(0),
  diskBytes: z.number().int().min(0),
  initSystem: short,
  packageManager: short,
  machineId: z.string().max(128),
  hostVersion: short,
  /**
   * How this host was installed, so a role picks its upgrade path by selector (decision 0007):
   * "deb" (the binary is dpkg's, of the mesh-host package: upgrade with a `package` resource),
   * "tarball" (the single executable, no package: a `host` resource), "script" (`node mesh-host.js`).
   * Optional: hosts older than this fact do not send it.
   */
  hostInstall: HostInstall.optional(),
});
export type Profile = z.infer<typeof Profile>;

export const Inventory = z.strictObject({
  packages: z.array(z.strictObject({ name: short, version: short })).max(LIMITS.packages),
  units: z.array(z.strictObject({ name: short, state: short })).max(LIMITS.units),
  ports: z.array(z.strictObject({ proto: z.enum(["tcp", "udp", "tcp6", "udp6"]), port: z.number().int().min(0).max(65535) })).max(LIMITS.ports),
  mounts: z.array(z.strictObject({ source: short, target: z.string().max(LIMITS.path), fstype: short })).max(LIMITS.mounts),
  truncated: z.boolean().default(false),
});
export type Inventory = z.infer<typeof Inventory>;
