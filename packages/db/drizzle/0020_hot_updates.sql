-- Fleet-wide statements update every node's row (a compile's declared_version, presence transitions,
-- report batches, the batched last-checked times) and every node's latest report. With pages packed
-- full, each new row version lands on another page and every index of the table gets an entry: for
-- nodes, nine of them, one a GIN. Room left on each page lets Postgres keep the new version on the
-- same page with no index entry (a HOT update; no indexed column changes). Decision 0056.
ALTER TABLE "nodes" SET (fillfactor = 70);
--> statement-breakpoint
ALTER TABLE "latest_reports" SET (fillfactor = 70);
