-- On SQLite this version rebuilt reservations keyed for lease renewal; on PostgreSQL
-- V1 already has that index. Kept so both backends count the same schema versions.
SELECT 1;
