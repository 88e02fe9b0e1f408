// Users and groups by name, as file owners are declared: ROOT/etc/passwd and
// ROOT/etc/group under a --root, the system's (files, then getent) otherwise.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ProcessRunner } from "../runner/process-runner";
import { outputOf, type Runner } from "../runner/runner";

interface Table {
  byName: Map<string, number>;
  byId: Map<number, string>;
  /** passwd only: the primary group and home directory of each user. */
  entries: Map<string, { gid: number; home: string }>;
}

export interface UserEntry {
  uid: number;
  gid: number;
  home: string;
}

export class Accounts {
  private users: Promise<Table> | null = null;
  private groups: Promise<Table> | null = null;

  /** `runner`: getent, for the system's users and groups that live outside /etc (LDAP, systemd-homed). */
  constructor(
    private readonly rootDir: string,
    private readonly runner: Runner = new ProcessRunner(),
  ) {}

  private get system(): boolean {
    return this.rootDir === "/";
  }

  async uid(name: string): Promise<number> {
    return this.lookup("passwd", name);
  }

  async gid(name: string): Promise<number> {
    return this.lookup("group", name);
  }

  /** What a process run as this user needs: its ids and its home. */
  async user(name: string): Promise<UserEntry> {
    const uid = await this.uid(name);
    const entry = (await this.table("passwd")).entries.get(name) ?? (this.system ? await getentUser(this.runner, name) : undefined);
    return { uid, gid: entry?.gid ?? uid, home: entry?.home ?? "/" };
  }

  /** The user's name, or the number when no entry names it. */
  async userName(uid: number): Promise<string> {
    return (await this.table("passwd")).byId.get(uid) ?? String(uid);
  }

  async groupName(gid: number): Promise<string> {
    return (await this.table("group")).byId.get(gid) ?? String(gid);
  }

  private async lookup(db: "passwd" | "group", name: string): Promise<number> {
    const table = await this.table(db);
    const id = table.byName.get(name) ?? (this.system ? await getent(this.runner, db, name) : undefined);
    if (id === undefined) {
      const where = this.system ? "on this machine" : `in ${join(this.rootDir, "etc", db)}`;
      throw new Error(`unknown ${db === "passwd" ? "user" : "group"} "${name}" ${where}`);
    }
    return id;
  }

  private table(db: "passwd" | "group"): Promise<Table> {
    const slot = db === "passwd" ? "users" : "groups";
    this[slot] ??= readTable(join(this.rootDir, "etc", db));
    return this[slot]!;
  }
}

/** name:x:id:... lines; a missing file is an empty table (a bare --root sandbox). */
async function readTable(file: string): Promise<Table> {
  const table: Table = { byName: new Map(), byId: new Map(), entries: new Map() };
  const text = await fs.readFile(file, "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    const [name, , id, gid, , home] = line.split(":");
    const n = Number(id);
    if (!name || id === undefined || id === "" || !Number.isInteger(n) || n < 0) continue;
    const g = Number(gid);
    if (home !== undefined && gid && Number.isInteger(g) && !table.entries.has(name)) table.entries.set(name, { gid: g, home });
    if (!table.byName.has(name)) table.byName.set(name, n);
    if (!table.byId.has(n)) table.byId.set(n, name);
  }
  return table;
}

/** The fields of one entry from NSS (users that live outside /etc: LDAP, systemd-homed), or undefined. */
async function getentFields(runner: Runner, db: "passwd" | "group", name: string): Promise<string[] | undefined> {
  return (await outputOf(runner, ["getent", db, name], { timeoutMs: 5000 }))?.trim().split(":");
}

function nonNegativeInt(field: string | undefined): number | undefined {
  const n = Number(field);
  return field && Number.isInteger(n) && n >= 0 ? n : undefined;
}

async function getent(runner: Runner, db: "passwd" | "group", name: string): Promise<number | undefined> {
  return nonNegativeInt((await getentFields(runner, db, name))?.[2]);
}

async function getentUser(runner: Runner, name: string): Promise<{ gid: number; home: string } | undefined> {
  const fields = await getentFields(runner, "passwd", name);
  const gid = nonNegativeInt(fields?.[3]);
  return gid === undefined ? undefined : { gid, home: fields?.[5] || "/" };
}
