-- name: undo_rows
-- version: 1
--
-- `sqlrun undo RUN`: the rows RUN replaced in one model's partition, as its history kept
-- them (system/replace.sql wrote them there with replaced_by = RUN), in the model's
-- columns: replace.sql and correct.sql read them in place of the model's SELECT. None: the
-- partition held no rows before RUN (it goes back to empty).
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}h.{{ c|ident }}{% endfor %}
FROM {{ model.history_table|ident }} AS h
WHERE h.replaced_by = {{ undo_of }} AND h.{{ model.date_column|ident }} = {{ ds }}
