// The systemd unit-name rule, once, for the control plane (declarations) and the host (its
// supervisor, the unit files it reads, [Install] targets, `mesh-host supervise --unit`):
// PREFIX[@INSTANCE].TYPE, where the prefix is not empty and has no '@', and a name is never a path.
import { z } from "zod";

/** The unit types a declaration's `service` resource may name. */
export const DECLARABLE_UNIT_TYPES = ["service", "socket", "timer", "path", "target", "mount"] as const;
/** Every unit type systemd knows (an [Install] section may name any of them). */
export const UNIT_TYPES = [...DECLARABLE_UNIT_TYPES, "device", "automount", "swap", "slice", "scope"] as const;
export type UnitType = (typeof UNIT_TYPES)[number];

const CHARS = "A-Za-z0-9:_.\\\\-";
const pattern = (types: readonly string[]) => new RegExp(`^([${CHARS}]+)(?:@([@${CHARS}]*))?\\.(${types.join("|")})$`);
const ANY = pattern(UNIT_TYPES);
/** The declarable rule as one regex, so the JSON schema and docs/api.md show it. */
export const DECLARABLE_UNIT_NAME = pattern(DECLARABLE_UNIT_TYPES);
export const MAX_UNIT_NAME = 256;

export interface UnitNameParts {
  /** The name without its type: "web@blue" of "web@blue.service". */
  name: string;
  /** Before the '@': "web". */
  prefix: string;
  /** After the '@' ("blue"; "" for a template, web@.service), or null for a plain unit. */
  instance: string | null;
  type: UnitType;
}

/** The parts of a valid unit name, or null when it is not one (of one of `types`, when given). */
export function parseUnitName(unit: string, types: readonly UnitType[] = UNIT_TYPES): UnitNameParts | null {
  if (unit.length > MAX_UNIT_NAME) return null;
  const m = ANY.exec(unit);
  if (!m || !types.includes(m[3] as UnitType)) return null;
  const prefix = m[1]!;
  const instance = m[2] ?? null;
  return { name: instance === null ? prefix : `${prefix}@${instance}`, prefix, instance, type: m[3] as UnitType };
}

export function isUnitName(unit: string, types: readonly UnitType[] = UNIT_TYPES): boolean {
  return parseUnitName(unit, types) !== null;
}

export const UnitName = z.string().max(MAX_UNIT_NAME).regex(DECLARABLE_UNIT_NAME, "a systemd unit name such as nginx.service");
