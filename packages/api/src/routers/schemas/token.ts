// token.create, token.list and token.revoke as the API returns them. The token itself is returned once.
import { z } from "zod";

export const CreatedToken = z.strictObject({
  id: z.string(),
  token: z.string().meta({ description: "The enrolment secret (shown once)." }),
  expiresAt: z.iso.datetime(),
  command: z.string().meta({ description: "The exact command that enrols a machine with it." }),
  installCommand: z.string().meta({ description: "Installs this control plane's mesh-host build on the new machine." }),
});

export const TokenListItem = z.strictObject({
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  maxUses: z.number().int(),
  uses: z.number().int(),
  expiresAt: z.date(),
  createdAt: z.date(),
  createdBy: z.string(),
  revokedAt: z.date().nullable(),
  status: z.enum(["unused", "used", "expired", "revoked"]),
  nodes: z.array(z.strictObject({ id: z.string(), name: z.string() })).meta({ description: "Up to 20 nodes that enrolled with it." }),
});

export const TokenPage = z.strictObject({ items: z.array(TokenListItem), total: z.number().int() });

export const TokenRevoked = z.strictObject({ id: z.string(), revoked: z.boolean() });
