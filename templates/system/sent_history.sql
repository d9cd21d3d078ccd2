-- name: sent_history
-- version: 1
--
-- <table>_sent_history: every version of every key that went out, oldest first: the
-- values as that seal or reissue sent them (<table>_sent), which version of the date it
-- was (1: the first report), who sent it, when and why, and whether it is the latest
-- version of a date sealed now. "What did we send on March 3rd" is, per date, every row
-- of the version whose sealed_at is the latest before it (a key missing from that
-- version was not sent then, even if an earlier version had it).
CREATE VIEW {{ model.history_view|ident }} AS
SELECT {% for c in model.columns %}x.{{ c|ident }}, {% endfor %}
       x.run_id,
       x.seal_id,
       (SELECT count(*) FROM seal_coverage AS v
          JOIN seal_events AS ve ON ve.seal_id = v.seal_id
         WHERE v.ds = x.{{ model.date_column|ident }} AND v.model = {{ model.name }}
           AND v.seal_id <= x.seal_id AND ve.action <> 'unseal') AS version,
       e.action,
       e.made_at AS sealed_at,
       e.made_by AS sealed_by,
       e.reason,
       EXISTS (SELECT 1 FROM sealed_models AS sm
                WHERE sm.ds = x.{{ model.date_column|ident }} AND sm.model = {{ model.name }}
                  AND sm.seal_id = x.seal_id) AS latest
FROM {{ model.sent_table|ident }} AS x
JOIN seal_events AS e ON e.seal_id = x.seal_id
