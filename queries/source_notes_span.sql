-- The first and the last date with a change noted for one source (source_changes), for
-- `sqlrun load` to say which computed dates now show as changed.
SELECT min(ds) AS first_ds, max(ds) AS last_ds FROM source_changes WHERE source = :source
