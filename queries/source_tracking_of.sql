-- What sqlrun installed on a source last: how many triggers, from which SQL.
SELECT triggers, install_sql FROM source_tracking WHERE source = :source
