-- name: preview_teardown
-- version: 1
--
-- `apply --diff`: its temporary objects dropped once its dates are done (those of
-- system/preview_setup.sql), each named in the session's temporary schema, so that a
-- pipeline object of the same name can never be the one dropped.
{% import "system/dialect.sql" as d %}
{% for p in previewed %}
{% with model = p.model, rows = "sqlrun_preview_" ~ loop.index %}
DROP VIEW IF EXISTS {{ d.temp_schema() }}.{{ model.current_view|ident }};
DROP VIEW IF EXISTS {{ d.temp_schema() }}.{{ model.table|ident }};
DROP TABLE IF EXISTS {{ d.temp_schema() }}.{{ (rows ~ "_dates")|ident }};
DROP TABLE IF EXISTS {{ d.temp_schema() }}.{{ rows|ident }};
{% endwith %}
{% endfor %}
