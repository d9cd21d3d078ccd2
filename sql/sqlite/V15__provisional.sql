-- A partition built before its period ended (`apply --allow-partial`: a month in
-- progress) is provisional: its rows are the days so far, and it is never sealed. The
-- next build after its period ends makes it final (0).
ALTER TABLE partition_models ADD COLUMN provisional INTEGER NOT NULL DEFAULT 0;
