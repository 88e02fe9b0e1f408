// A node's name in the fleet: the name shown (display name, else hostname) and its short id, so two
// machines with one hostname are told apart; the hostname too when an admin renamed it.
import Link from "next/link";

export function FleetNodeName({ node }: { node: { id: string; name: string; hostname: string; displayName: string | null } }) {
  return (
    <span className="inline-flex flex-wrap items-baseline gap-x-1.5">
      <Link prefetch={false} href={`/nodes/${node.id}`} className="font-medium text-slate-900 underline-offset-2 hover:underline">
        {node.name}
      </Link>
      <span data-testid="short-id" className="font-mono text-xs text-slate-600" title={node.id}>
        {node.id.slice(0, 8)}
      </span>
      {node.displayName && <span className="text-xs text-slate-600">({node.hostname})</span>}
    </span>
  );
}
