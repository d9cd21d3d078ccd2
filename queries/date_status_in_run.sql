-- How a date ended in a run (record_date.sql decides: success, corrected, unchanged).
SELECT status FROM run_partitions WHERE run_id = :run_id AND ds = :ds
