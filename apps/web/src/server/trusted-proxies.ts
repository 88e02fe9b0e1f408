// Which peers may speak for a client (X-Forwarded-For/-Host/-Proto): only the proxies
// the operator named in MESH_TRUSTED_PROXIES; from anyone else those headers are dropped.
import net, { BlockList } from "node:net";
import { plainAddress } from "@mesh/api";

/** Strips the IPv4-mapped prefix Node puts on IPv4 peers of a dual-stack socket (shared with the api's limits). */

/** "10.0.0.1", "fd00::1", "10.0.0.0/8" or "fd00::/8". */
export function isAddressOrCidr(entry: string): boolean {
  const [address, bits, ...rest] = entry.split("/");
  if (rest.length > 0 || !address) return false;
  const family = net.isIP(address);
  if (!family) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const entry of entries) {
      const [address, bits] = entry.split("/") as [string, string | undefined];
      const type = net.isIP(address) === 6 ? "ipv6" : "ipv4";
      if (bits === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(bits), type);
    }
  }

  has(address: string | undefined): boolean {
    if (this.empty) return false;
    const a = plainAddress(address);
    const family = net.isIP(a);
    if (!family) return false;
    return this.list.check(a, family === 6 ? "ipv6" : "ipv4");
  }

  /**
   * The client behind a chain of trusted proxies: the right-most X-Forwarded-For
   * entry that is not itself a trusted proxy (entries left of it are client-written).
   */
  clientAddress(peer: string | undefined, forwardedFor: string | undefined): string {
    const direct = plainAddress(peer);
    if (!this.has(direct) || !forwardedFor) return direct;
    const hops = forwardedFor
      .split(",")
      .map((s) => plainAddress(s.trim()))
      .filter((s) => net.isIP(s));
    for (let i = hops.length - 1; i >= 0; i--) if (!this.has(hops[i])) return hops[i]!;
    return hops[0] ?? direct;
  }
}
