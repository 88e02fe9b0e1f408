// Whether this control plane can hand out mesh-host yet: the install command only works once
// `npm run package` has built the host for this version (otherwise curl gets a 404).
import type { ArtifactStatus } from "@mesh/api";

export function ArtifactStatusNote({ status }: { status: ArtifactStatus }) {
  if (status.arches.length === 0) {
    return (
      <div role="alert" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900">
        <p className="font-medium">{`mesh-host ${status.hostVersion} is not built on this control plane yet.`}</p>
        <p className="mt-1">
          The install command below downloads it from here and will fail until it is. Build it once with{" "}
          <code className="rounded bg-amber-100 px-1">npm run package</code> in the repository (or point{" "}
          <code className="rounded bg-amber-100 px-1">MESH_ARTIFACTS_DIR</code> at a directory holding the release), then reload this page.
        </p>
      </div>
    );
  }
  return (
    <p className="text-sm text-slate-700">
      {`mesh-host ${status.hostVersion} is ready to install here: ${status.arches.join(" and ")}${status.debs.length > 0 ? `, and as a .deb (${status.debs.join(", ")})` : ""}.`}
    </p>
  );
}
