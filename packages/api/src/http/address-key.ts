// The key one client is counted under, shared by every per-address limit (connections,
// logins, enrolments, audit budgets): its IPv4 address, or its IPv6 /64.
import net from "node:net";

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is its IPv4 address. */
export function plainAddress(address: string | undefined): string {
  return (address ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
}

/**
 * One machine commonly holds a whole IPv6 /64, so counting single IPv6 addresses bounds
 * nothing: every address in a /64 counts as one. Anything else (no address) is "?".
 */
export function addressKey(address: string | undefined): string {
  const a = plainAddress(address);
  if (net.isIPv6(a)) {
    const full = expandIpv6(a.replace(/%.*$/, ""));
    return full ? `${full.slice(0, 4).join(":")}::/64` : a;
  }
  return a || "?";
}

function expandIpv6(a: string): string[] | null {
  const [head, tail] = a.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  if (right.some((g) => g.includes(".")) || left.some((g) => g.includes("."))) return null;
  const missing = 8 - left.length - right.length;
  if (missing < 0) return null;
  return [...left, ...Array(tail === undefined ? 0 : missing).fill("0"), ...right].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""));
}
