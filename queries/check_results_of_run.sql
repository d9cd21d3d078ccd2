-- The checks that found rows on a run's dates, with the first of those rows.
SELECT ds, check_name, model, severity, failing_rows, CAST(sample AS TEXT) AS sample
FROM check_results
WHERE run_id = :run_id
ORDER BY ds, check_name
