-- When each partition was built: the clock of its date's transaction, to the millisecond
-- (as 'YYYY-MM-DD HH:MM:SS.SSS', which compares as text in time order). A partition built
-- before a partition it reads was rebuilt, by another run, stands `upstream`
-- (system/date_states.sql, version 11). Partitions recorded before this column: the end
-- of their date's record where the partition is the date's own (a day's); NULL for a
-- week's or a month's, which is then never judged `upstream` until it is built again.
ALTER TABLE partition_models ADD COLUMN built_at TEXT;
UPDATE partition_models
   SET built_at = (SELECT rp.finished_at FROM run_partitions AS rp
                    WHERE rp.run_id = partition_models.run_id AND rp.ds = partition_models.ds);
