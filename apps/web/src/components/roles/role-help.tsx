// Field help beside the role editor, rendered from the role's JSON schema (role-schema.ts).
import { roleHelp } from "./role-schema";

export function RoleHelp() {
  const help = roleHelp();
  return (
    <details data-testid="role-help" className="rounded-md border border-slate-200 p-3 text-sm">
      <summary className="cursor-pointer font-medium">Help: resource types, onDrift, selector operators</summary>
      <div className="mt-2 space-y-3">
        <section>
          <h3 className="font-semibold">Selector operators</h3>
          <p className="text-slate-700">Each label or profile fact in the selector takes one condition; a node matches when all hold.</p>
          <ul className="list-disc pl-5">
            {help.operators.map((o) => (
              <li key={o}>{o}</li>
            ))}
          </ul>
        </section>
        <section>
          <h3 className="font-semibold">
            <code>onDrift</code> ({help.onDrift.values})
          </h3>
          <p data-testid="help-ondrift">{help.onDrift.description}</p>
        </section>
        <section>
          <h3 className="font-semibold">Resource types</h3>
          <dl className="space-y-2">
            {help.resources.map((r) => (
              <div key={r.type} data-testid={`help-type-${r.type}`}>
                <dt>
                  <code className="font-semibold">{`"type": "${r.type}"`}</code>: {r.description}
                </dt>
                <dd>
                  <ul className="pl-4 text-slate-700">
                    {r.fields.map((f) => (
                      <li key={f.name}>
                        <code>{f.name}</code>
                        {f.required ? " (required)" : ""}
                        {f.values ? ` ${f.values}` : ""}
                        {f.description ? `: ${f.description}` : ""}
                      </li>
                    ))}
                  </ul>
                </dd>
              </div>
            ))}
          </dl>
        </section>
      </div>
    </details>
  );
}
