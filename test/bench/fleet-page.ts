// Fleet page with 10,000 nodes: seeds them straight into a fresh Postgres database,
// then measures in Chromium the time to first render (first contentful paint) and to
// interactive (React hydrated), and the API calls behind the page's filters and sorts.
// Run: DATABASE_URL=postgres://… npx tsx bench/fleet-page.ts   (needs `npm run build -w @mesh/web`)
import postgres from "postgres";
import { createPostgresDatabase } from "@mesh/db/testing";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { launchBrowser, logIn } from "../harness/browser";
import { emptyInventory, testProfile } from "../../packages/api/src/testing/host-facts";

const NODES = Number(process.env.BENCH_NODES ?? 10_000);
const RUNS = 7;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (all: number[]) =>
  ((xs) => `${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`)(all.filter((x) => Number.isFinite(x)));

// A string, not a function: tsx would wrap named functions in a helper the page lacks.
const SEARCH_TIMING = `(async () => {
  const name = "NAME";
  const input = document.querySelector('input[type="search"]');
  const t0 = performance.now();
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(input, name);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  await new Promise((resolve) => {
    const done = () => {
      const rows = document.querySelectorAll('[data-testid="fleet-row"]');
      return rows.length === 1 && rows[0].textContent.includes(name);
    };
    if (done()) return resolve();
    setTimeout(() => resolve(), 10000);
    new MutationObserver((_, o) => { if (done()) { o.disconnect(); resolve(); } }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  const rows = document.querySelectorAll('[data-testid="fleet-row"]');
  return performance.now() - t0 < 9990 ? performance.now() - t0 : "timeout " + rows.length + " " + input.value + " " + (rows[0] && rows[0].textContent);
})()`;

async function seed(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const profile = testProfile("0", { hostname: "x" });
  const inventory = emptyInventory();
  const t0 = performance.now();
  // One statement: states, labels, drift and last-seen spread the way a real fleet's are.
  await sql`
    insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory, declared_version, applied_version, owned_count, drift_count, host_version, last_seen_at)
    select gen_random_uuid(), 'node-' || lpad(i::text, 5, '0'),
      (array['enrolled','enrolled','enrolled','enrolled','enrolled','enrolled','disconnected','retiring','retired','revoked'])[1 + i % 10],
      jsonb_build_object('tier', (array['web','db','cache','batch'])[1 + i % 4], 'zone', (array['a','b','c'])[1 + i % 3]),
      'key-' || i, md5(i::text), ${sql.json(profile)}, ${sql.json(inventory)},
      2, case when i % 17 = 0 then 1 else 2 end, 3, case when i % 23 = 0 then 1 else 0 end,
      case when i % 50 = 0 then '0.0.9' else '0.1.0' end,
      now() - (i % 600) * interval '1 second'
    from generate_series(1, ${NODES}) as i`;
  await sql`insert into declaration_bodies (hash, resources) values ('empty', '[]'::jsonb)`;
  await sql`
    insert into declarations (node_id, version, hash, roles)
    select id, 2, 'empty',
      case labels->>'tier' when 'web' then '["base","web"]'::jsonb when 'db' then '["base","db"]'::jsonb else '["base"]'::jsonb end
    from nodes`;
  await sql`analyze`;
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  await sql.end();
  return seconds;
}

async function main() {
  const db = await createPostgresDatabase("mesh_bench");
  let cp: ControlPlane | undefined;
  const browser = await launchBrowser();
  try {
    // The control plane migrates the fresh database; then the nodes go straight in.
    cp = await ControlPlane.start({ engine: "postgres", databaseUrl: db.url, env: { MESH_LOG_LEVEL: "warn" } });
    const seconds = await seed(db.url);
    console.log(`seeded ${NODES} nodes in ${seconds} s`);

    const client = api(cp.url);
    const calls: Record<string, object | undefined> = {
      "node.list (page 1, by name)": { limit: 50, offset: 0 },
      "node.list (last seen, newest first)": { limit: 50, offset: 0, sort: "lastSeenAt", order: "desc" },
      "node.list (page 100)": { limit: 50, offset: 4950 },
      "node.list (drifting only)": { limit: 50, drift: true },
      "node.list (label tier=web)": { limit: 50, label: "tier=web" },
      "node.list (role db)": { limit: 50, role: "db" },
      "node.list (search '0420')": { limit: 50, search: "0420" },
      "node.counts": undefined,
    };
    const apiFigures: Record<string, number[]> = {};
    for (const [name, input] of Object.entries(calls)) {
      const proc = name.split(" ")[0]!;
      await client.query(proc, input);
      apiFigures[name] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        await client.query(proc, input);
        apiFigures[name].push(performance.now() - t0);
      }
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await logIn(page, cp.url);
    await page.getByTestId("fleet-row").first().waitFor();
    const fcp: number[] = [];
    const tti: number[] = [];
    const ttfb: number[] = [];
    const filter: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await page.goto(`${cp.url}/`, { waitUntil: "commit" });
      await page.waitForFunction(() => document.documentElement.dataset.hydrated === "true", undefined, { polling: 5 });
      const t = await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        const paint = performance.getEntriesByName("first-contentful-paint")[0];
        return { ttfb: nav.responseStart, fcp: paint?.startTime ?? NaN, now: performance.now() };
      });
      ttfb.push(t.ttfb);
      fcp.push(t.fcp);
      tti.push(t.now);
      // Interactive means usable: a search typed in is answered by the server and shown.
      // Timed inside the page, so the figure is the dashboard's, not the test driver's.
      filter.push(await page.evaluate<number>(SEARCH_TIMING.replace("NAME", `node-0${4200 + i}`)));
    }
    console.log(`\nFleet page, ${NODES} nodes, Chromium headless, median of ${RUNS}:`);
    console.log(`  time to first byte:                ${fmt(ttfb)}`);
    console.log(`  time to first render (FCP):        ${fmt(fcp)}`);
    console.log(`  time to interactive (hydrated):    ${fmt(tti)}`);
    console.log(`  search typed -> one row shown:     ${fmt(filter)}`);
    console.log(`\nAPI over HTTP, median of 20:`);
    for (const [name, xs] of Object.entries(apiFigures)) console.log(`  ${name.padEnd(40)} ${fmt(xs)}`);
  } finally {
    await browser.close();
    await cp?.dispose();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
