// A table's header row: one scope="col" cell per column name, then, for rows that
// carry buttons, an Actions column named for screen readers only.
export function ColumnHeads({
  names,
  cell,
  actions = false,
  className = "text-left text-slate-700",
}: {
  names: string[];
  cell: string;
  actions?: boolean;
  className?: string;
}) {
  const th = `${cell} font-medium`;
  return (
    <thead className={className}>
      <tr>
        {names.map((name) => (
          <th key={name} scope="col" className={th}>
            {name}
          </th>
        ))}
        {actions && (
          <th scope="col" className={th}>
            <span className="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
