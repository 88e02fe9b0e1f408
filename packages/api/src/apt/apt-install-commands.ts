// The commands a new machine runs to install mesh-host from this control plane's apt repository
// (the Add machines page shows them beside `curl | sh`). Every value shell-quoted.
import { curlPin } from "@mesh/protocol";
import { shellCommand, shellQuote } from "../shell-quote";
import { COMPONENT, SUITE } from "./apt-index";

export const KEYRING_PATH = "/usr/share/keyrings/mesh.gpg";

export interface AptInstallCommands {
  /** Fetches /apt/mesh.gpg to KEYRING_PATH (pinned to the control plane's key over TLS). */
  key: string;
  /** The sources line, written to /etc/apt/sources.list.d/mesh.list. */
  sourceLine: string;
  source: string;
  /**
   * Over TLS with a pin (a self-signed certificate apt cannot check): apt is told not to check the
   * certificate of this one host, since the signature on the index (checked against the pinned key)
   * carries integrity and Valid-Until its freshness. Absent over http and without a pin.
   */
  transport?: string;
  install: string;
}

export function aptSourceLine(publicUrl: string): string {
  return `deb [signed-by=${KEYRING_PATH}] ${publicUrl}/apt ${SUITE} ${COMPONENT}`;
}

export function aptInstallCommands(publicUrl: string, tlsPin?: string): AptInstallCommands {
  const pinned = publicUrl.startsWith("https://") && tlsPin;
  const curl = pinned ? ["curl", "-fsSL", "-k", "--pinnedpubkey", curlPin(tlsPin), "-o", KEYRING_PATH] : ["curl", "-fsSL", "-o", KEYRING_PATH];
  const sourceLine = aptSourceLine(publicUrl);
  const host = new URL(publicUrl).hostname;
  return {
    key: shellCommand([...curl, `${publicUrl}/apt/mesh.gpg`]),
    sourceLine,
    source: `echo ${shellQuote(sourceLine)} > /etc/apt/sources.list.d/mesh.list`,
    ...(pinned ? { transport: `echo ${shellQuote(`Acquire::https::${host}::Verify-Peer "false";`)} > /etc/apt/apt.conf.d/50mesh` } : {}),
    install: "apt-get update && apt-get install -y mesh-host",
  };
}
