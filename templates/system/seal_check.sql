-- name: seal_check
-- version: 1
--
-- What `sqlrun seal` finds on each date of its interval. A seal is all or nothing: a
-- date no run built (blocked_missing) or that a run holds now (blocked_by, the run)
-- blocks the seal of every date; a date sealed before (sealed) is left as it was sent.
-- Runs that are gone were reclaimed just before, in the same transaction, so their
-- dates block nothing.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
WITH RECURSIVE dates(ds) AS (
    {{ d.date_series(start, end) }}
)
SELECT d.ds,
       NOT EXISTS (SELECT 1 FROM run_partitions AS p
                    WHERE p.ds = d.ds AND p.status IN {{ common.built() }}) AS blocked_missing,
       r.run_id AS blocked_by,
       (s.ds IS NOT NULL) AS sealed
FROM dates AS d
LEFT JOIN reservations AS r ON r.ds = d.ds
LEFT JOIN seals AS s ON s.ds = d.ds
ORDER BY d.ds
