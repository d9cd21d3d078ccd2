-- name: record_checks
-- version: 1
--
-- The checks that found rows on a date, with the first of those rows: in the date's own
-- transaction for `warn` checks (the date commits), in its failure record's for a date
-- that failed its `error` checks (the date rolled back, this record stays).
{% import "system/dialect.sql" as d %}
{% for f in failures %}
INSERT INTO check_results (run_id, ds, check_name, model, severity, version, failing_rows,
                           sample, checked_at)
VALUES ({{ run_id }}, {{ ds }}, {{ "checks/" ~ f.check }}, {{ f.model }}, {{ f.severity }},
        {{ f.version }}, {{ f.failing_rows }}, {{ f.sample }}, {{ d.now() }});
{% endfor %}
