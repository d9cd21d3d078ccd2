-- name: sent_view
-- version: 3
--
-- <table>_sent_vs_now: per key of every date sealed for the model, what went out (its
-- latest version in <table>_sent: a reissue's values once one went out) beside
-- what is true now (<table>_current), and how they differ: state is 'unchanged',
-- 'changed' (a value differs), 'new' (a key the seal never saw: a correction added it) or
-- 'removed' (a key that went out and is gone now). Read it to answer "what did we send,
-- and what would we send today", per model and key, without reading corrections.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
CREATE VIEW {{ model.sent_view|ident }} AS
SELECT {% for k in model.key %}coalesce(s.{{ k|ident }}, n.{{ k|ident }}) AS {{ k|ident }},
       {% endfor %}
{% for v in model.values %}
       s.{{ v|ident }} AS {{ ("sent_" ~ v)|ident }},
       n.{{ v|ident }} AS {{ ("now_" ~ v)|ident }},
{% endfor %}
       CASE WHEN s.present IS NULL THEN 'new'
            WHEN n.present IS NULL THEN 'removed'
{% for v in model.values %}
            WHEN s.{{ v|ident }} {{ d.differs() }} n.{{ v|ident }} THEN 'changed'
{% endfor %}
            ELSE 'unchanged' END AS state
FROM (SELECT {% for c in model.columns %}x.{{ c|ident }}, {% endfor %}1 AS present
      FROM {{ model.sent_table|ident }} AS x
      JOIN sealed_models AS sm
        ON sm.ds = x.{{ model.date_column|ident }} AND sm.model = {{ model.name }}
       AND sm.seal_id = x.seal_id) AS s
FULL JOIN (SELECT {% for c in model.columns %}c.{{ c|ident }}, {% endfor %}1 AS present
           FROM {{ model.current_view|ident }} AS c
           WHERE c.{{ model.date_column|ident }} IN (SELECT sm.ds FROM sealed_models AS sm
                                                      WHERE sm.model = {{ model.name }})) AS n
  ON {{ common.same_key(model, "s", "n", d.join_same()) }}
