// CSV for every export (the Fleet's, the audit trail's): one cell rule, RFC 4180 with every cell
// quoted, and a cell a spreadsheet would run as a formula defused.

/** A cell that starts like a formula (or a tab/CR some spreadsheets skip to find one) gets a leading '. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: empty for null, ISO for a date, JSON for an object; always quoted, quotes doubled. */
export function csvCell(value: unknown): string {
  const s =
    value === null || value === undefined
      ? ""
      : typeof value === "string"
        ? value
        : value instanceof Date
          ? value.toISOString()
          : typeof value === "object"
            ? JSON.stringify(value)
            : String(value);
  return `"${(FORMULA_START.test(s) ? `'${s}` : s).replace(/"/g, '""')}"`;
}

/** One line of cells, CRLF-terminated. */
export const csvLine = (values: readonly unknown[]): string => values.map(csvCell).join(",") + "\r\n";
