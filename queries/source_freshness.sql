-- The sources that declare how late their data may be (`-- fresh_within:`), as the view
-- source_freshness (templates/system/source_freshness.sql) says they stand now.
SELECT source, measured_by, last_change_at, fresh_within_seconds, fresh
FROM source_freshness
WHERE fresh_within_seconds IS NOT NULL
ORDER BY source
