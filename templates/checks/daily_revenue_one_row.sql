-- name: daily_revenue_one_row
-- version: 1
-- model: daily_revenue
-- severity: error
--
-- Every date has exactly one row, also a date with no orders (revenue 0): none means
-- the model lost the date, two mean a join doubled it.
{% import "system/checks.sql" as check %}
{{ check.row_count(min=1, max=1) }}
