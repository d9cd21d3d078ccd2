-- The columns of a source table, in order (none: there is no such table).
SELECT name FROM pragma_table_info(:table) ORDER BY cid
