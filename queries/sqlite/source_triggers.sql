-- How many of sqlrun's change triggers a source table has (source_tracking.sql), by
-- their exact names: a trigger of the user's own is no business of this count.
SELECT count(*) AS triggers FROM sqlite_schema
WHERE type = 'trigger' AND tbl_name = :table
  AND name IN ('sqlrun_' || :table || '_insert', 'sqlrun_' || :table || '_delete',
               'sqlrun_' || :table || '_update')
