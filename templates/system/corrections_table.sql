-- name: corrections_table
-- version: 1
--
-- Every model gets <table>_corrections: one row each time a sealed date's
-- recomputed value for a key differs from its current value. previous_* is what it
-- supersedes; removed = 1 when the key is gone from the recomputed date.
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
    corrected_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS {{ (model.corrections_table ~ "_by_key")|ident }}
    ON {{ model.corrections_table|ident }} ({{ model.key|idents }}, correction_id);
