// The resources a declaration may hold: a discriminated union on `type`.
// A new resource type joins the union here, and gets a subject (what it manages).
import { z } from "zod";
import { DebianVersion, parseDebianVersion } from "./debian-version";
import { LIMITS } from "./limits";
import { Sha256Hex } from "./sha256";
import { UnitName } from "./unit-name";

export const ResourceId = z
  .string()
  .min(1)
  .max(LIMITS.id)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, "letters, digits, '_', '.', ':' or '-', starting with a letter or digit");

/** An absolute, normalised path: no '..' or '.' segments, no empty segments, no NUL. */
export const AbsolutePath = z
  .string()
  .min(2)
  .max(LIMITS.path)
  .refine((p) => p.startsWith("/"), "must be absolute")
  .refine((p) => !p.includes("\0"), "must not contain NUL")
  .refine((p) => !p.endsWith("/"), "must not end with '/'")
  .refine(
    (p) =>
      p
        .slice(1)
        .split("/")
        .every((s) => s !== "" && s !== "." && s !== ".."),
    "must be normalised (no empty, '.' or '..' segments)",
  );

export const FileMode = z.string().regex(/^0?[0-7]{3,4}$/, 'an octal mode such as "0644"');

/** A user or group by name, as in /etc/passwd. */
export const AccountName = z.string().regex(/^[a-z_][a-z0-9_-]{0,31}\$?$/, "a user or group name");

/** A file the control plane serves, checked by its sha256 before use. */
export const RemoteSource = z.strictObject({
  /** A path on the control plane (e.g. /api/files/<sha256>) or an absolute http(s) URL. */
  url: z
    .string()
    .min(1)
    .max(2048)
    .refine((u) => u.startsWith("/") || /^https?:\/\//.test(u), "a path on the control plane or an http(s) URL"),
  sha256: Sha256Hex,
});
export type RemoteSource = z.infer<typeof RemoteSource>;

export const OnDrift = z.enum(["correct", "report"]).meta({
  description:
    "What the host does when the machine has moved away from this resource: correct puts it back at the next reconcile (the default); report leaves it and reports it as drift for an admin to accept or correct.",
});
export type OnDrift = z.infer<typeof OnDrift>;

const common = {
  id: ResourceId.meta({ description: "A name for this resource, unique in the role; other resources name it in after." }),
  /** Ids that must be applied before this one (and removed after it). */
  after: z.array(ResourceId).max(64).optional().meta({ description: "Ids of resources applied before this one (and removed after it)." }),
  /** What the host does when the machine moved away from the declaration. */
  onDrift: OnDrift.default("correct"),
};

export const FileResource = z
  .strictObject({
    type: z.literal("file"),
    ...common,
    path: AbsolutePath.meta({ description: "Absolute path of the file on the machine." }),
    /** Inline content (text, or base64 with encoding "base64"), or a source. */
    content: z.string().max(LIMITS.fileContent).optional().meta({ description: "The file's content, inline (give content or source, not both)." }),
    encoding: z.enum(["utf8", "base64"]).default("utf8").meta({ description: "How content is written: utf8 text (the default) or base64 for binary." }),
    source: RemoteSource.optional().meta({ description: "A file the control plane serves (url and sha256), instead of inline content." }),
    mode: FileMode.default("0644").meta({ description: "Octal permissions, 0644 by default." }),
    owner: AccountName.optional(),
    group: AccountName.optional(),
  })
  .meta({ description: "file: a regular file with inline content or a served source, its mode and owner." })
  .refine((f) => (f.content === undefined) !== (f.source === undefined), { message: "give exactly one of content or source", path: ["content"] });
export type FileResource = z.infer<typeof FileResource>;

export const DirectoryResource = z
  .strictObject({
    type: z.literal("directory"),
    ...common,
    path: AbsolutePath.meta({ description: "Absolute path of the directory." }),
    mode: FileMode.default("0755").meta({ description: "Octal permissions, 0755 by default." }),
    owner: AccountName.optional(),
    group: AccountName.optional(),
    /** Remove children the host does not own. Off by default: the host removes only what it owns. */
    purge: z.boolean().default(false).meta({ description: "Also remove children the host does not own (off by default: the host removes only what it owns)." }),
  })
  .meta({ description: "directory: a directory, its mode and owner; removed only when empty of what the host does not own." });
export type DirectoryResource = z.infer<typeof DirectoryResource>;

export const SymlinkResource = z
  .strictObject({
    type: z.literal("symlink"),
    ...common,
    path: AbsolutePath.meta({ description: "Absolute path of the link." }),
    target: z
      .string()
      .min(1)
      .max(LIMITS.path)
      .refine((t) => !t.includes("\0"), "must not contain NUL")
      .meta({ description: "What the link points to." }),
  })
  .meta({ description: "symlink: a symbolic link at path pointing to target." });
export type SymlinkResource = z.infer<typeof SymlinkResource>;

export const PackageName = z.string().regex(/^[a-z0-9][a-z0-9+.-]{1,127}$/, "a Debian package name");

export const PackageResource = z
  .strictObject({
    type: z.literal("package"),
    ...common,
    name: PackageName.meta({ description: "The Debian package name." }),
    state: z.enum(["installed", "absent"]).default("installed").meta({ description: "installed (the default) or absent." }),
    /** An exact Debian version; without it any installed version is fine. */
    version: DebianVersion.optional().meta({ description: "An exact Debian version; without it any installed version is fine." }),
    /** A .deb served by the control plane, installed with dpkg -i. */
    source: RemoteSource.optional().meta({ description: "A .deb the control plane serves, installed with dpkg -i." }),
  })
  .meta({ description: "package: a Debian package installed (or absent) with apt-get or dpkg." });
export type PackageResource = z.infer<typeof PackageResource>;

export const ServiceResource = z
  .strictObject({
    type: z.literal("service"),
    ...common,
    unit: UnitName.meta({ description: "The systemd unit, e.g. nginx.service." }),
    /** Unit file content, written to /etc/systemd/system/<unit>. */
    content: z.string().max(LIMITS.fileContent).optional().meta({ description: "Unit file content, written to /etc/systemd/system/<unit>." }),
    enabled: z.boolean().optional().meta({ description: "Started at boot (true) or not (false); left alone when absent." }),
    state: z.enum(["running", "stopped"]).optional().meta({ description: "running or stopped; left alone when absent." }),
  })
  .meta({ description: "service: a systemd unit (its file, enabled, running or stopped)." });
export type ServiceResource = z.infer<typeof ServiceResource>;

/** A release of the host: semver-like, as `mesh-host version` prints it. */
export const HostVersion = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[0-9]+\.[0-9]+\.[0-9]+([-.+][A-Za-z0-9.+-]*)?$/, "a version such as 1.2.3");

/**
 * Whether a host that says it runs `hostVersion` (`mesh-host version`) runs the Debian package
 * version `debVersion` of `mesh-host`: the same string, or the same once Debian's epoch ("1:") is
 * dropped, or once the Debian revision (the part after the last "-") is dropped too. So "1:1.2.3-1",
 * "1.2.3-1" and "1.2.3" are all 1.2.3; "1.2.3-rc.1" is run by 1.2.3-rc.1 (the release itself) and by 1.2.3.
 */
export function hostRunsPackageVersion(hostVersion: string | null | undefined, debVersion: string | null | undefined): boolean {
  if (!hostVersion || !debVersion) return false;
  // Parsed by the one Debian contract: what is no Debian version ("1.2.3-", an empty revision) names no release.
  const deb = parseDebianVersion(debVersion);
  if (!deb) return false;
  if (hostVersion === (deb.revision === null ? deb.upstream : `${deb.upstream}-${deb.revision}`)) return true;
  return deb.revision !== null && hostVersion === deb.upstream;
}

/**
 * The host's own binary (DESIGN invariant 6): the host downloads the release, checks its
 * sha256 and its Ed25519 release signature, puts it over its own path and exits for the
 * supervisor to start it. Without `source`, the control plane's artifact of that version.
 */
export const HostResource = z
  .strictObject({
    type: z.literal("host"),
    ...common,
    version: HostVersion.meta({ description: "The mesh-host release to run, e.g. 1.2.3." }),
    sha256: Sha256Hex.meta({ description: "sha256 of the release binary." }),
    source: RemoteSource.optional(),
    /** base64 Ed25519 signature by the release key over `hostReleaseMessage(version, sha256)`. */
    signature: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, "base64"),
    /** Going back to an older version is refused unless this says so. */
    allowDowngrade: z.boolean().default(false),
  })
  .meta({ description: "host: the mesh-host binary itself (self-upgrade), checked by sha256 and release signature." })
  .refine((h) => !h.source || h.source.sha256 === h.sha256, { message: "source.sha256 must equal sha256", path: ["source", "sha256"] });
export type HostResource = z.infer<typeof HostResource>;

/** What a release signature covers: the version and the bytes, so a signed old build cannot pass for a new version. */
export function hostReleaseMessage(version: string, sha256: string): string {
  return `mesh-host release v1\n${version}\n${sha256}\n`;
}

export const Resource = z.discriminatedUnion("type", [FileResource, DirectoryResource, SymlinkResource, PackageResource, ServiceResource, HostResource]);
export type Resource = z.infer<typeof Resource>;
export type ResourceInput = z.input<typeof Resource>;
export type ResourceType = Resource["type"];
export const RESOURCE_TYPES = ["file", "directory", "symlink", "package", "service", "host"] as const satisfies readonly ResourceType[];

/** What a resource manages on the machine; two resources may not share one. */
export function resourceSubject(r: Resource): string {
  switch (r.type) {
    case "package":
      return `package:${r.name}`;
    case "service":
      return `service:${r.unit}`;
    case "host":
      // One host binary per machine: two host resources collide on this subject.
      return "host:mesh-host";
    default:
      return `path:${r.path}`;
  }
}

/** Adds an issue for every repeated id or subject, and every `after` naming no resource or forming a cycle. */
export function refineResources(list: Resource[], ctx: z.RefinementCtx): void {
  const ids = new Map<string, number>();
  const subjects = new Set<string>();
  list.forEach((r, i) => {
    if (ids.has(r.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `duplicate id "${r.id}"` });
    ids.set(r.id, i);
    const subject = resourceSubject(r);
    if (subjects.has(subject)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate ${subject.replace(":", " ")}` });
    subjects.add(subject);
  });
  list.forEach((r, i) => {
    (r.after ?? []).forEach((dep, j) => {
      if (!ids.has(dep)) ctx.addIssue({ code: "custom", path: [i, "after", j], message: `names no resource "${dep}"` });
    });
  });
  const cycle = findCycle(list);
  if (cycle) ctx.addIssue({ code: "custom", path: [ids.get(cycle[0]!)!, "after"], message: `dependency cycle: ${cycle.join(" -> ")}` });
}

/** A cycle in the `after` graph, as the ids along it, or null. */
export function findCycle(list: Resource[]): string[] | null {
  const deps = new Map(list.map((r) => [r.id, r.after ?? []]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 2) return null;
    if (state.get(id) === 1) return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d)) continue;
      const c = visit(d);
      if (c) return c;
    }
    stack.pop();
    state.set(id, 2);
    return null;
  };
  for (const id of deps.keys()) {
    const c = visit(id);
    if (c) return c;
  }
  return null;
}

/** Resources with unique ids and subjects and an acyclic `after` graph. */
export const ResourceList = z.array(Resource).max(LIMITS.resources).superRefine(refineResources);
