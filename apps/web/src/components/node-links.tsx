// A few nodes named as links to their pages, "a, b and 3 more": plans and conflict refusals name
// the nodes they are about this way.
import Link from "next/link";

export function NodeLinks({ nodes, total }: { nodes: Array<{ id: string; name: string }>; total: number }) {
  return (
    <>
      {nodes.map((n, i) => (
        <span key={n.id}>
          {i > 0 && ", "}
          <Link prefetch={false} href={`/nodes/${n.id}`} className="underline">
            {n.name}
          </Link>
        </span>
      ))}
      {total > nodes.length && ` and ${total - nodes.length} more`}
    </>
  );
}
