// Sizes as people read them: binary units (what free(1) and the kernel count in), three
// significant figures at most, "15.6 GiB" rather than 16747003904.
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return String(bytes);
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 100 ? Math.round(value).toString() : value >= 10 ? value.toFixed(1) : value.toFixed(2);
  // 1023.96 KiB rounds to "1024 KiB": say "1 MiB" instead.
  if (shown === "1024" && unit < UNITS.length - 1) return `1 ${UNITS[unit + 1]}`;
  return `${shown.replace(/\.0+$|(\.\d*?)0+$/, "$1")} ${UNITS[unit]}`;
}
