-- name: corrections_feed
-- version: 1
--
-- <table>_corrections_feed: each correction of the model, oldest first, as a consumer of
-- the report reads it: its key; per value what the seal version it departs from sent
-- (sent_*: none for a key that version never had), what it superseded (previous_*) and
-- what it says (the value columns); the seal version (seal_id) and the newest seal event
-- when it was written (after_seal_id: `corrections --since SEAL` takes those at or after
-- SEAL); its cause (late_rows, new_version, late_rows+new_version, rerun, untracked; NULL: written
-- before sqlrun recorded causes); the run, its kind and who ran it; and settled_by, the
-- reissue or unseal that folded it into the model's table, with that event's action.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
CREATE VIEW {{ model.feed_view|ident }} AS
SELECT c.correction_id,
       {% for k in model.key %}c.{{ k|ident }}, {% endfor %}
       {% for v in model.values %}t.{{ v|ident }} AS {{ ("sent_" ~ v)|ident }}, c.{{ ("previous_" ~ v)|ident }}, c.{{ v|ident }}, {% endfor %}
       c.removed,
       c.cause,
       c.seal_id,
       c.after_seal_id,
       c.run_id,
       r.kind AS run_kind,
       r.requested_by AS run_by,
       c.corrected_at,
       c.settled_by,
       se.action AS settled_action
FROM {{ model.corrections_table|ident }} AS c
LEFT JOIN {{ model.sent_table|ident }} AS t
  ON {{ common.same_key(model, "t", "c", d.same()) }} AND t.seal_id = c.seal_id
LEFT JOIN runs AS r ON r.run_id = c.run_id
LEFT JOIN seal_events AS se ON se.seal_id = c.settled_by
