-- The database knows its pipeline. Each model sqlrun has used here is recorded the first
-- time it is used (in the transaction that creates its table, corrections table and
-- views), so that templates that lack one, or give its table to another model, are
-- refused as the wrong pipeline instead of silently leaving that model behind. A model
-- that is gone for good is retired explicitly (`sqlrun retire`): its table and rows stay.

CREATE TABLE models (
    name            TEXT PRIMARY KEY,     -- daily_revenue (the file models/daily_revenue.sql)
    table_name      TEXT NOT NULL,        -- the table it fills
    key_columns     TEXT NOT NULL,        -- 'ds' or 'ds, band'
    version         INTEGER NOT NULL,     -- the version last used here
    first_seen_at   TEXT NOT NULL,
    first_run_id    INTEGER,              -- the first run that used it (NULL until one has)
    retired_at      TEXT,                 -- set while it is retired
    retired_by      TEXT,
    retired_reason  TEXT
);
-- A table belongs to one live model at a time (a retired model's table is free).
CREATE UNIQUE INDEX models_live_table ON models (table_name) WHERE retired_at IS NULL;

-- What happened to each model: added, retired, restored (back in the templates after a
-- retirement). `models` holds the present; this keeps the history.
CREATE TABLE model_events (
    event_id      INTEGER PRIMARY KEY,
    model         TEXT NOT NULL,
    at            TEXT NOT NULL,
    event         TEXT NOT NULL CHECK (event IN ('added', 'retired', 'restored')),
    requested_by  TEXT NOT NULL,
    detail        TEXT
);
CREATE INDEX model_events_by_model ON model_events (model, event_id);
