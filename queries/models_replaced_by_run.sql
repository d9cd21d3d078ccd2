-- The models whose partitions a run replaced (`sqlrun diff RUN`), each once.
SELECT DISTINCT model FROM replaced_partitions WHERE replaced_by = :run_id ORDER BY model
