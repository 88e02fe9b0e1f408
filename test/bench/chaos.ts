// Chaos at length: 200 SIGKILLs of mesh-host apply (random instants and every named
// fail point), each followed by a restart and the same checks as the CI test.
// Run: npm run bench:chaos -w @mesh/test   (MESH_CHAOS_KILLS, MESH_CHAOS_SEED to change)
import { runChaos } from "../harness/chaos";

async function main() {
  const kills = Number(process.env.MESH_CHAOS_KILLS ?? 200);
  const seed = Number(process.env.MESH_CHAOS_SEED ?? Date.now() % 100_000);
  let last = 0;
  const stats = await runChaos(kills, {
    seed,
    log: (line) => {
      // A line every 20 kills or so, not one per kill.
      if (Date.now() - last > 5000) (last = Date.now()), console.log(line);
    },
  });
  console.log(`seed ${seed}`);
  console.log(
    `kills: ${stats.kills} (${stats.randomKills} at random instants; fail points: ${Object.entries(stats.failpointKills)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")})`,
  );
  console.log(`${stats.recovered}/${stats.kills}, ${stats.orphans} orphans, ${stats.lostRecords} lost records, ${(stats.ms / 1000).toFixed(0)} s`);
  for (const p of stats.problems.slice(0, 20)) console.log(`problem: ${p}`);
  if (stats.problems.length) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
