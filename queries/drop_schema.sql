-- SQLite has no schemas to drop: the demo deletes its scratch file instead.
SELECT NULL AS statement
