-- The latest version of a declared source the database has (sources/NAME.sql), with its
-- checksum: what its table is now.
SELECT version, checksum
FROM source_declarations
WHERE source = :source
ORDER BY version DESC
LIMIT 1
