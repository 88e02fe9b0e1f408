// The file, directory and symlink providers against a temp --root, driven through
// one reconcile at a time as the host drives them: create, no-op, update, drift, adopt/restore, remove.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
  chownSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { generateKeyPairSync, verify } from "node:crypto";
import { Declaration, HTTP_SIGNATURE_HEADERS, httpSignatureMessage, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { reconcile } from "../reconcile/reconcile";
import { MemoryStore } from "../store/memory-store";
import { digestOf, sha256Hex } from "./observed";
import { observePath } from "./path-state";
import { Accounts } from "./accounts";
import { providerFor } from "./providers";
import { Root, RootEscapeError } from "./root";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

let rootDir: string;
let store: MemoryStore;
const at = (p: string) => join(rootDir, p);
const mode = (p: string) => (statSync(at(p)).mode & 0o7777).toString(8).padStart(4, "0");

beforeEach(() => {
  const base = mkdtempSync(join(tmpdir(), "mesh-res-"));
  temps.push(base);
  rootDir = join(base, "root");
  mkdirSync(rootDir);
  store = new MemoryStore();
});

const NODE_ID = "00000000-0000-4000-8000-000000000001";
const nodeKey = generateKeyPairSync("ed25519");

function run(resources: ResourceInput[], opts: { version?: number; controlPlaneUrl?: string } = {}) {
  return reconcile(
    {
      store,
      root: new Root(rootDir),
      log: silentLogger(),
      enrolled: false,
      controlPlane: opts.controlPlaneUrl ? { url: opts.controlPlaneUrl, nodeId: NODE_ID, privateKey: nodeKey.privateKey } : null,
    },
    { declaration: Declaration.parse({ version: opts.version ?? 1, resources }) },
  );
}
const kinds = (changes: { kind: string; id: string }[]) => changes.map((c) => `${c.kind}:${c.id}`);

const site: ResourceInput = { type: "directory", id: "site", path: "/srv", mode: "0750" };
const index: ResourceInput = { type: "file", id: "index", path: "/srv/index.html", content: "<h1>hello</h1>\n", mode: "0640" };
const link: ResourceInput = { type: "symlink", id: "current", path: "/srv/current", target: "index.html" };

describe("file, directory and symlink: create and no-op", () => {
  it("creates parents first, then is a no-op", async () => {
    const first = await run([link, index, site]);
    expect(first.report.errors).toEqual([]);
    expect(kinds(first.changes)).toEqual(["created:site", "created:current", "created:index"]);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");
    expect(readlinkSync(at("srv/current"))).toBe("index.html");
    expect(mode("srv")).toBe("0750");
    expect(mode("srv/index.html")).toBe("0640");
    expect(first.report.owned.map((o) => o.id).sort()).toEqual(["current", "index", "site"]);

    const second = await run([link, index, site]);
    expect(second.changes).toEqual([]);
    expect(second.unchanged).toBe(3);
    expect(second.report.drift).toEqual([]);
    expect(second.report.owned).toEqual(first.report.owned);
  });

  it("owned digests equal the declared digests when nothing drifted", async () => {
    const { report } = await run([site, index, link]);
    const parsed = Declaration.parse({ version: 1, resources: [site, index, link] }).resources;
    const declared = Object.fromEntries(parsed.map((r) => [r.id, digestOf(providerFor(r.type).declared(r))]));
    for (const o of report.owned) expect(o.digest).toBe(declared[o.id]);
  });
});

describe("update: a changed declaration", () => {
  it("updates content, mode and target (an update, not drift)", async () => {
    await run([site, index, link]);
    const { report, changes } = await run(
      [
        { ...site, mode: "0755" } as ResourceInput,
        { ...index, content: "v2", mode: "0600" } as ResourceInput,
        { ...link, target: "/elsewhere" } as ResourceInput,
      ],
      { version: 2 },
    );
    expect(kinds(changes).sort()).toEqual(["updated:current", "updated:index", "updated:site"]);
    expect(report.drift).toEqual([]);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("v2");
    expect(mode("srv/index.html")).toBe("0600");
    expect(mode("srv")).toBe("0755");
    expect(readlinkSync(at("srv/current"))).toBe("/elsewhere");
  });
});

describe("drift", () => {
  it("onDrift correct: corrects mode, content, presence and target, and reports each once", async () => {
    await run([site, index, link]);
    chmodSync(at("srv/index.html"), 0o644);
    let { report } = await run([site, index, link]);
    expect(report.drift).toEqual([expect.objectContaining({ id: "index", type: "file", description: "mode 0644, declared 0640", corrected: true })]);
    expect(mode("srv/index.html")).toBe("0640");

    writeFileSync(at("srv/index.html"), "defaced");
    ({ report } = await run([site, index, link]));
    expect(report.drift[0]?.description).toMatch(/^content differs \(sha256 [0-9a-f]{12}…, declared [0-9a-f]{12}…\)$/);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");

    chmodSync(at("srv"), 0o777);
    ({ report } = await run([site, index, link]));
    expect(report.drift).toEqual([expect.objectContaining({ id: "site", type: "directory", description: "mode 0777, declared 0750", corrected: true })]);
    expect(mode("srv")).toBe("0750");

    rmSync(at("srv/current"));
    symlinkSync("/etc/shadow", at("srv/current"));
    ({ report } = await run([site, index, link]));
    expect(report.drift).toEqual([expect.objectContaining({ id: "current", description: "target /etc/shadow, declared index.html", corrected: true })]);
    expect(readlinkSync(at("srv/current"))).toBe("index.html");

    rmSync(at("srv/index.html"));
    ({ report } = await run([site, index, link]));
    expect(report.drift).toEqual([expect.objectContaining({ id: "index", description: "missing", observed: null, corrected: true })]);
    expect(existsSync(at("srv/index.html"))).toBe(true);

    ({ report } = await run([site, index, link]));
    expect(report.drift).toEqual([]);
  });

  it("onDrift report: reports in every reconcile until the machine matches again, and changes nothing", async () => {
    const watched = [
      { ...site, onDrift: "report" },
      { ...index, onDrift: "report" },
      { ...link, onDrift: "report" },
    ] as ResourceInput[];
    await run(watched);
    chmodSync(at("srv"), 0o700);
    writeFileSync(at("srv/index.html"), "edited by hand");
    for (let i = 0; i < 2; i++) {
      const { report, changes } = await run(watched);
      expect(changes).toEqual([]);
      expect(report.drift.map((d) => [d.id, d.corrected])).toEqual([
        ["site", false],
        ["index", false],
      ]);
      expect(report.drift[0]!.description).toBe("mode 0700, declared 0750");
      expect(report.drift[0]!.observed).toBe(report.owned.find((o) => o.id === "site")!.digest);
    }
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("edited by hand");
    chmodSync(at("srv"), 0o750);
    writeFileSync(at("srv/index.html"), "<h1>hello</h1>\n");
    expect((await run(watched)).report.drift).toEqual([]);
  });
});

describe("adopt and restore", () => {
  it("a file that stood there is adopted, changed, and put back (content, mode, owner) when it leaves", async () => {
    mkdirSync(at("srv"));
    writeFileSync(at("srv/index.html"), "the original\n");
    chmodSync(at("srv/index.html"), 0o604);
    chownSync(at("srv/index.html"), 12, 34);
    const first = await run([site, index]);
    expect(kinds(first.changes)).toEqual(["adopted:site", "adopted:index"]);
    expect(first.report.owned.map((o) => [o.id, o.adopted])).toEqual([
      ["site", true],
      ["index", true],
    ]);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");
    // The original's content is kept under the state dir until it is restored.
    expect(store.keys()).toContain(`originals/${sha256Hex("the original\n")}`);

    const { changes, report } = await run([], { version: 2 });
    expect(kinds(changes)).toEqual(["restored:index", "restored:site"]);
    expect(report.owned).toEqual([]);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("the original\n");
    expect(mode("srv/index.html")).toBe("0604");
    expect([statSync(at("srv/index.html")).uid, statSync(at("srv/index.html")).gid]).toEqual([12, 34]);
    expect(existsSync(at("srv"))).toBe(true);
    expect(store.keys().filter((k) => k.startsWith("originals/"))).toEqual([]);
  });

  it("a directory that already matched is adopted without a change and left in place when it leaves", async () => {
    mkdirSync(at("srv"));
    chmodSync(at("srv"), 0o750);
    const first = await run([site]);
    expect(kinds(first.changes)).toEqual(["adopted:site"]);
    writeFileSync(at("srv/other"), "x");
    await run([], { version: 2 });
    expect(existsSync(at("srv/other"))).toBe(true);
    expect(mode("srv")).toBe("0750");
  });

  it("a directory whose mode differed gets its mode back", async () => {
    mkdirSync(at("srv"));
    chmodSync(at("srv"), 0o711);
    await run([site]);
    expect(mode("srv")).toBe("0750");
    await run([], { version: 2 });
    expect(mode("srv")).toBe("0711");
  });

  it("a symlink replaces a file it adopts, and the file comes back", async () => {
    writeFileSync(at("current"), "a plain file");
    await run([{ type: "symlink", id: "l", path: "/current", target: "/opt/x" }]);
    expect(lstatSync(at("current")).isSymbolicLink()).toBe(true);
    await run([], { version: 2 });
    expect(lstatSync(at("current")).isFile()).toBe(true);
    expect(readFileSync(at("current"), "utf8")).toBe("a plain file");
  });

  it("a symlink that stood there is restored to its old target", async () => {
    symlinkSync("old-target", at("l"));
    await run([{ type: "symlink", id: "l", path: "/l", target: "new-target" }]);
    expect(readlinkSync(at("l"))).toBe("new-target");
    await run([], { version: 2 });
    expect(readlinkSync(at("l"))).toBe("old-target");
  });
});

describe("remove", () => {
  it("removes what it made when it leaves, and only that", async () => {
    writeFileSync(at("keep.txt"), "not the host's");
    await run([site, index, link]);
    const { report, changes } = await run([], { version: 2 });
    expect(kinds(changes).sort()).toEqual(["removed:current", "removed:index", "removed:site"]);
    expect(kinds(changes).at(-1)).toBe("removed:site");
    expect(report.owned).toEqual([]);
    expect(existsSync(at("srv"))).toBe(false);
    expect(readFileSync(at("keep.txt"), "utf8")).toBe("not the host's");
  });

  it("keeps a non-empty owned directory with what it does not own, reports it, and skips its parent", async () => {
    const parent: ResourceInput = { type: "directory", id: "parent", path: "/p" };
    const child: ResourceInput = { type: "directory", id: "child", path: "/p/c" };
    await run([parent, child]);
    writeFileSync(at("p/c/upload.log"), "someone else's");
    const { report } = await run([], { version: 2 });
    expect(readFileSync(at("p/c/upload.log"), "utf8")).toBe("someone else's");
    expect(report.errors).toEqual([{ id: "child", message: expect.stringContaining("/p/c left in place: not empty") }]);
    expect(report.skipped).toEqual([{ id: "parent", reason: 'removal of "child" failed' }]);
    expect(report.owned.map((o) => o.id).sort()).toEqual(["child", "parent"]);
    rmSync(at("p/c/upload.log"));
    const again = await run([], { version: 2 });
    expect(again.report.errors).toEqual([]);
    expect(existsSync(at("p"))).toBe(false);
  });

  it("a symlink is removed, never what it points to", async () => {
    writeFileSync(at("target"), "stays");
    await run([{ type: "symlink", id: "l", path: "/l", target: "target" }]);
    await run([], { version: 2 });
    expect(existsSync(at("l"))).toBe(false);
    expect(readFileSync(at("target"), "utf8")).toBe("stays");
  });
});

describe("owner and group by name", () => {
  beforeEach(() => {
    mkdirSync(at("etc"));
    writeFileSync(at("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nweb:x:1234:1234::/srv:/usr/sbin/nologin\n");
    writeFileSync(at("etc/group"), "root:x:0:\nweb:x:1234:\nlogs:x:2345:web\n");
  });

  it("resolves names through ROOT/etc/passwd and ROOT/etc/group, and corrects owner drift", async () => {
    const owned = [
      { ...site, owner: "web", group: "web" },
      { ...index, owner: "web", group: "logs" },
    ] as ResourceInput[];
    const { report } = await run(owned);
    expect(report.errors).toEqual([]);
    expect([statSync(at("srv")).uid, statSync(at("srv")).gid]).toEqual([1234, 1234]);
    expect([statSync(at("srv/index.html")).uid, statSync(at("srv/index.html")).gid]).toEqual([1234, 2345]);
    chownSync(at("srv/index.html"), 0, 2345);
    const again = await run(owned);
    expect(again.report.drift).toEqual([expect.objectContaining({ id: "index", description: "owner root, declared web", corrected: true })]);
    expect(statSync(at("srv/index.html")).uid).toBe(1234);
  });

  it("an unknown user is a clear error for that resource", async () => {
    const { report } = await run([{ ...site, owner: "nobody-here" } as ResourceInput]);
    expect(report.errors).toEqual([{ id: "site", message: `unknown user "nobody-here" in ${join(rootDir, "etc", "passwd")}` }]);
  });

  it("names a uid no entry names by its number", async () => {
    expect(await new Accounts(rootDir).userName(4242)).toBe("4242");
  });
});

describe("file sources", () => {
  let server: Server;
  let url: string;
  const body = Buffer.from("served by the control plane\n");
  beforeAll(async () => {
    server = createServer((req, res) => {
      // As the control plane does: the download is signed by the node key.
      const time = String(req.headers[HTTP_SIGNATURE_HEADERS.time]);
      const signed =
        req.headers[HTTP_SIGNATURE_HEADERS.node] === NODE_ID &&
        verify(
          null,
          Buffer.from(httpSignatureMessage("GET", req.url!, time, sha256Hex(""))),
          nodeKey.publicKey,
          Buffer.from(String(req.headers[HTTP_SIGNATURE_HEADERS.signature]), "base64"),
        );
      if (!signed) {
        res.statusCode = 401;
        res.end("unsigned");
      } else if (req.url === "/api/files/good" || req.url === "/api/files/liar") {
        res.end(req.url.endsWith("liar") ? "something else" : body);
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const sourced = (name: string): ResourceInput => ({ type: "file", id: "f", path: "/f", source: { url: `/api/files/${name}`, sha256: sha256Hex(body) } });

  it("downloads from the enrolled control plane and checks the sha256", async () => {
    const { report } = await run([sourced("good")], { controlPlaneUrl: url });
    expect(report.errors).toEqual([]);
    expect(readFileSync(at("f"))).toEqual(body);
    // Already there: a no-op that fetches nothing.
    const again = await run([sourced("good")], { controlPlaneUrl: `${url}/nowhere` });
    expect(again.changes).toEqual([]);
  });

  it("refuses content whose sha256 differs, and writes nothing", async () => {
    const { report } = await run([sourced("liar")], { controlPlaneUrl: url });
    expect(report.errors).toEqual([{ id: "f", message: expect.stringMatching(/sha256 [0-9a-f]{12}…, declared [0-9a-f]{12}…; not written/) }]);
    expect(existsSync(at("f"))).toBe(false);
  });

  it("fails clearly when the host is not enrolled", async () => {
    const { report } = await run([sourced("good")]);
    expect(report.errors).toEqual([{ id: "f", message: expect.stringContaining("not enrolled") }]);
  });
});

describe("directory purge", () => {
  it("leaves unmanaged children alone by default, and removes them with purge", async () => {
    await run([site, index]);
    writeFileSync(at("srv/stray"), "x");
    mkdirSync(at("srv/stray-dir"));
    writeFileSync(at("srv/stray-dir/deep"), "x");
    expect((await run([site, index])).changes).toEqual([]);
    const purging = { ...site, purge: true } as ResourceInput;
    const { report } = await run([purging, index], { version: 2 });
    expect(report.drift).toEqual([]);
    expect(existsSync(at("srv/stray"))).toBe(false);
    expect(existsSync(at("srv/stray-dir"))).toBe(false);
    expect(readFileSync(at("srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");
    writeFileSync(at("srv/new-stray"), "x");
    const again = await run([purging, index], { version: 2 });
    expect(again.report.drift).toEqual([expect.objectContaining({ id: "site", description: "1 unmanaged entries, declared none", corrected: true })]);
    expect(existsSync(at("srv/new-stray"))).toBe(false);
  });
});

describe("paths and the root", () => {
  it("refuses a path that escapes the root through a symlink", async () => {
    const outside = mkdtempSync(join(tmpdir(), "mesh-outside-"));
    temps.push(outside);
    symlinkSync(outside, at("escape"));
    const { report } = await run([{ type: "file", id: "evil", path: "/escape/passwd", content: "x" }]);
    expect(report.errors).toEqual([{ id: "evil", message: expect.stringContaining("outside the root") }]);
    expect(report.owned).toEqual([]);
    expect(existsSync(join(outside, "passwd"))).toBe(false);
    await expect(new Root(rootDir).resolve("/escape/passwd")).rejects.toBeInstanceOf(RootEscapeError);
  });

  it("refuses a dangling symlink on the way", async () => {
    symlinkSync("/nonexistent-mesh-target", at("dangling"));
    await expect(new Root(rootDir).resolve("/dangling/x")).rejects.toBeInstanceOf(RootEscapeError);
  });

  it("a file whose parent is not there is an error, and nothing is owned", async () => {
    const { report } = await run([{ type: "file", id: "f", path: "/nope/f", content: "x" }]);
    expect(report.errors).toEqual([{ id: "f", message: expect.stringContaining("parent directory") }]);
    expect(report.owned).toEqual([]);
  });

  it("does not replace a directory with a file or a symlink", async () => {
    mkdirSync(at("d"));
    const { report } = await run([
      { type: "file", id: "f", path: "/d", content: "x" },
      { type: "symlink", id: "l", path: "/d2", target: "x" },
    ]);
    expect(report.errors[0]?.message).toMatch(/is a directory; not replaced/);
    expect(statSync(at("d")).isDirectory()).toBe(true);
    mkdirSync(at("d3"));
    const link = await run([{ type: "symlink", id: "l", path: "/d3", target: "x" }]);
    expect(link.report.errors[0]?.message).toMatch(/is a directory; not replaced by a symlink/);
  });

  it("observes files, directories, symlinks and absence", async () => {
    writeFileSync(at("f"), "abc");
    chmodSync(at("f"), 0o600);
    const accounts = { accounts: new Accounts(rootDir) };
    expect(await observePath(at("f"), "/f", accounts)).toMatchObject({
      type: "file",
      path: "/f",
      mode: "0600",
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    symlinkSync("f", at("l"));
    expect(await observePath(at("l"), "/l", accounts)).toMatchObject({ type: "symlink", target: "f" });
    expect(await observePath(at("missing"), "/missing", accounts)).toBeNull();
  });
});
