-- 0020 left 30 % of each page free; measured on 10,000 nodes (decision 0056), a fleet-wide update then
-- kept only half the new row versions on their page the first time (5,000 of 10,000) and the table grew
-- to hold the rest. At 50 % every new version fits beside the old one, every time (10,000 of 10,000,
-- ~42 ms a statement, no growth). Pages already written keep their old fill until rows move.
ALTER TABLE "nodes" SET (fillfactor = 50);
--> statement-breakpoint
ALTER TABLE "latest_reports" SET (fillfactor = 50);
