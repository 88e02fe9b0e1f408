import { handleBootstrapToken } from "@mesh/api";
import { getRuntime, publicUrlFromHeaders, remoteAddress, runtimeDeps, wasForwarded } from "@/server/runtime";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  const { config, tlsPin } = getRuntime();
  return handleBootstrapToken(runtimeDeps(), req, {
    address: remoteAddress(req),
    forwarded: wasForwarded(req),
    secretFile: config.bootstrapSecretFile,
    publicUrl: publicUrlFromHeaders(req.headers),
    tlsPin,
  });
}
