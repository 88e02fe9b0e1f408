-- Node rows are updated in place all the time (declared version at every fleet compile, report figures,
-- link transitions) and none of those columns is indexed: room left in each page lets Postgres make them
-- heap-only updates (no new index entries), which a fleet compile of 10,000 rows pays for (decision 0018).
-- Pages written before this keep their fill until the table is rewritten (VACUUM FULL).
ALTER TABLE "nodes" SET (fillfactor = 70);
