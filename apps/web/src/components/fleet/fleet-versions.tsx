// "Declared / applied" that never reads as success when it is not (issue 13): a failed or refused
// version says so next to its number.
export function FleetVersions({
  node,
}: {
  node: { declaredVersion: number; appliedVersion: number; rejectedVersion: number | null; errorCount: number; skippedCount: number; health: string | null };
}) {
  const refused = node.rejectedVersion !== null && node.rejectedVersion >= node.declaredVersion;
  const failed = !refused && node.appliedVersion === node.declaredVersion && (node.errorCount > 0 || node.skippedCount > 0);
  return (
    <span className="tabular-nums">
      v{node.declaredVersion} /{" "}
      <span className={node.appliedVersion === node.declaredVersion && !failed ? "" : "font-medium text-amber-900"}>v{node.appliedVersion}</span>
      {refused && (
        <span data-testid="version-failure" className="ml-1.5 text-xs font-medium text-rose-800">
          v{node.rejectedVersion} refused
        </span>
      )}
      {failed && (
        <span data-testid="version-failure" className="ml-1.5 text-xs font-medium text-rose-800">
          {node.errorCount > 0 ? `${node.errorCount} failed` : ""}
          {node.errorCount > 0 && node.skippedCount > 0 ? ", " : ""}
          {node.skippedCount > 0 ? `${node.skippedCount} skipped` : ""}
        </span>
      )}
    </span>
  );
}
