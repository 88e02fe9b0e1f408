// JSON for reading: an object or array that fits on its line stays on one line; a larger one breaks
// one member per line, indented by two spaces (JSON.stringify's layout, without its thousand short lines).
const WIDTH = 100;

/** One line, spaced: `{ "a": 1, "b": [1, 2] }`. */
function oneLine(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(oneLine).join(", ")}]`;
  const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`);
  return members.length === 0 ? "{}" : `{ ${members.join(", ")} }`;
}

/** `column`: where on its line the value starts (after its key). */
export function compactJson(value: unknown, indent = "", column = indent.length): string {
  const flat = oneLine(value);
  if (value === null || typeof value !== "object" || column + flat.length <= WIDTH) return flat;
  const inner = indent + "  ";
  const members = Array.isArray(value)
    ? value.map((v) => inner + compactJson(v, inner))
    : Object.entries(value).map(([k, v]) => {
        const key = `${inner}${JSON.stringify(k)}: `;
        return key + compactJson(v, inner, key.length);
      });
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return members.length === 0 ? `${open}${close}` : `${open}\n${members.join(",\n")}\n${indent}${close}`;
}
