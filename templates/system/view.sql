-- name: view
-- version: 1
--
-- A pipeline view (views/*.sql): derived on every read, never stored.
CREATE VIEW {{ view.name|ident }} AS
{% include view.template %}
