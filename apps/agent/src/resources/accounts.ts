// Users and groups by name, as file owners are declared: ROOT/etc/passwd and
// ROOT/etc/group under a --root, the system's (files, then getent) otherwise.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import { join } from "node:path";

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

  constructor(private readonly rootDir: string) {}

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
    const entry = (await this.table("passwd")).entries.get(name) ?? (this.system ? await getentUser(name) : undefined);
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
    const id = table.byName.get(name) ?? (this.system ? await getent(db, name) : undefined);
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
function getentFields(db: "passwd" | "group", name: string): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    execFile("getent", [db, name], { timeout: 5000 }, (err, stdout) => resolve(err ? undefined : stdout.trim().split(":")));
  });
}

function nonNegativeInt(field: string | undefined): number | undefined {
  const n = Number(field);
  return field && Number.isInteger(n) && n >= 0 ? n : undefined;
}

async function getent(db: "passwd" | "group", name: string): Promise<number | undefined> {
  return nonNegativeInt((await getentFields(db, name))?.[2]);
}

async function getentUser(name: string): Promise<{ gid: number; home: string } | undefined> {
  const fields = await getentFields("passwd", name);
  const gid = nonNegativeInt(fields?.[3]);
  return gid === undefined ? undefined : { gid, home: fields?.[5] || "/" };
}
