// For outbox.test.ts: adds reports to a disk outbox as fast as it can and prints each sequence
// once add() returned (kept on disk), until the test kills it with SIGKILL.
import { DiskStore } from "../store/disk-store";
import { silentLogger } from "../log";
import { ReportOutbox } from "./outbox";

async function main() {
  const store = new DiskStore(process.argv[2]!);
  await store.init();
  const outbox = await ReportOutbox.open(store, silentLogger());
  const sha = "a".repeat(64);
  for (let i = 0; ; i++) {
    const drift = [{ id: `r${i}`, type: "file" as const, declared: sha, observed: null, description: "missing", corrected: true }];
    const sent = await outbox.add({
      declarationVersion: 1,
      owned: [],
      drift,
      errors: [],
      skipped: [],
      storeLost: false,
      reconciledAt: new Date().toISOString(),
    });
    process.stdout.write(`${sent.sequence}\n`);
  }
}
void main();
