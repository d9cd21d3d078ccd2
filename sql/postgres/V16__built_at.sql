-- When each partition was built: see sql/sqlite/V16__built_at.sql.
ALTER TABLE partition_models ADD COLUMN built_at timestamptz;
UPDATE partition_models AS pm
   SET built_at = rp.finished_at
  FROM run_partitions AS rp
 WHERE rp.run_id = pm.run_id AND rp.ds = pm.ds;
