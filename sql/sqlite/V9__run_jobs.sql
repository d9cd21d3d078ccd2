-- How many dates a run computed at once (`apply --jobs`, PostgreSQL only above 1).
-- NULL: a run from before this column, or a reserved run that has not started.
ALTER TABLE runs ADD COLUMN jobs INTEGER;
