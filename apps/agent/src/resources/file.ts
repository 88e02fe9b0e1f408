// The `file` resource: content (inline or a source on the control plane), mode,
// owner and group. Written whole (temp, fsync, rename); a symlink at the path is replaced, not followed.
import type { FileResource } from "@mesh/protocol";
import { writeFileAtomically, type Content } from "./atomic-write";
import { normaliseMode, sha256Hex } from "./observed";
import { inodeOf, observeDeclared, ownerIds, replacedPathLifecycle, setOwnerAndMode } from "./path-state";
import type { ProviderContext, ResourceProvider } from "./provider";

export function inlineContent(resource: FileResource): Buffer {
  return Buffer.from(resource.content ?? "", resource.encoding === "base64" ? "base64" : "utf8");
}

/** Inline bytes, or the source streamed straight into the temp file (never held whole). */
function contentOf(resource: FileResource, ctx: ProviderContext): Content {
  const source = resource.source;
  return source ? (fh) => ctx.fetchSource(source, fh) : inlineContent(resource);
}

export const fileProvider: ResourceProvider<FileResource> = {
  type: "file",
  atomic: true,

  declared(resource) {
    return {
      type: "file",
      path: resource.path,
      mode: normaliseMode(resource.mode),
      sha256: resource.source ? resource.source.sha256 : sha256Hex(inlineContent(resource)),
      ...(resource.owner ? { owner: resource.owner } : {}),
      ...(resource.group ? { group: resource.group } : {}),
    };
  },

  async observe(path, _resource, ctx) {
    return observeDeclared(path, ctx);
  },

  async apply(resource, observed, ctx) {
    if (observed && observed.type !== "file" && observed.type !== "symlink") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a file`);
    }
    const hostPath = await ctx.hostPath(resource.path);
    const want = this.declared(resource);
    const ids = await ownerIds(resource, observed, ctx);
    const mode = parseInt(String(want.mode), 8);
    if (observed?.type === "file" && observed.sha256 === want.sha256) {
      // Same content: fix what differs in place rather than download or rewrite it, through a
      // descriptor of the very file observed (a symlink swapped in since is never followed).
      const owner = (ids.uid !== undefined && ids.uid !== observed.uid) || (ids.gid !== undefined && ids.gid !== observed.gid);
      if (owner || observed.mode !== want.mode) setOwnerAndMode(hostPath, resource.path, "file", inodeOf(observed), { ...(owner ? ids : {}), mode });
      return;
    }
    await writeFileAtomically(hostPath, contentOf(resource, ctx), { mode, ...ids }, resource.path, ctx.syncLater);
  },

  ...replacedPathLifecycle,
};
