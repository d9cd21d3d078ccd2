-- The demo's scratch schema, and everything in it, goes when the demo ends.
SELECT format('DROP SCHEMA %I CASCADE', CAST(:schema AS text)) AS statement
