-- name: undo_rows
-- version: 2
--
-- `sqlrun undo RUN`: the rows RUN replaced in one model's partition, as its history kept
-- them (system/replace.sql wrote them there with replaced_by = RUN), in the model's
-- columns: replace.sql and correct.sql read them in place of the model's SELECT. None: the
-- partition held no rows before RUN (it goes back to empty).
-- Version 2: the rows are found by the partition column's value (`period_start`, as
-- replace.sql v4 keeps them), not by `ds`: an hour's partition is its first instant (for a
-- day, a week or a month the two are the same). An hourly model is put back a whole local
-- day at a time (its bookkeeping is per day): an hour of it that RUN did not build (RUN
-- was asked for hours) holds no row of RUN and RUN replaced nothing there, so it keeps the
-- rows it had, which this run has just moved to history, instead of going empty.
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}h.{{ c|ident }}{% endfor %}
FROM {{ model.history_table|ident }} AS h
WHERE h.replaced_by = {{ undo_of }} AND h.{{ model.date_column|ident }} = {{ period_start }}
{% if model.grain == "hour" %}
UNION ALL
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}h.{{ c|ident }}{% endfor %}
FROM {{ model.history_table|ident }} AS h
WHERE h.replaced_by = {{ run_id }} AND h.{{ model.date_column|ident }} = {{ period_start }}
  AND NOT EXISTS (SELECT 1 FROM {{ model.history_table|ident }} AS o
                  WHERE o.{{ model.date_column|ident }} = {{ period_start }}
                    AND (o.replaced_by = {{ undo_of }}
                         OR (o.replaced_by = {{ run_id }} AND o.run_id = {{ undo_of }})))
{% endif %}
