-- name: corrections_table
-- version: 2
--
-- Every model gets <table>_corrections: one row each time a sealed date's
-- recomputed value for a key differs from its current value. previous_* is what it
-- supersedes; removed = 1 when the key is gone from the recomputed date. seal_id is the
-- seal version it departs from (sealed_models when it was written), after_seal_id the
-- newest seal event then (what `corrections --since SEAL` compares), cause what made
-- it (vocabulary::Cause), settled_by the reissue or unseal that folded it into the
-- model's table (NULL: it is open, `<table>_current` applies it).
CREATE TABLE IF NOT EXISTS {{ model.corrections_table|ident }} (
    correction_id INTEGER PRIMARY KEY,
{% for k in model.key %}
    {{ k|ident }} NOT NULL,
{% endfor %}
{% for v in model.values %}
    {{ v|ident }},
{% endfor %}
{% for v in model.values %}
    {{ ("previous_" ~ v)|ident }},
{% endfor %}
    removed INTEGER NOT NULL DEFAULT 0,
    run_id INTEGER NOT NULL,
    corrected_at TEXT NOT NULL,
    seal_id INTEGER,
    after_seal_id INTEGER,
    cause TEXT,
    settled_by INTEGER
);
CREATE INDEX IF NOT EXISTS {{ (model.corrections_table ~ "_by_key")|ident }}
    ON {{ model.corrections_table|ident }} ({{ model.key|idents }}, correction_id);
