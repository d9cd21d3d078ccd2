-- The server's clock, now (not when the transaction began): on PostgreSQL it, not a
-- runner's, decides what day it is (src/dates/clock.rs). Microseconds since 1970 in UTC,
-- so that nothing on the way rounds it to the second.
SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000000) AS bigint) AS micros
