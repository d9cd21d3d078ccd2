-- name: daily_revenue_not_null
-- version: 1
-- model: daily_revenue
-- severity: error
--
-- A date's revenue and order count are numbers (0 on a date with no orders), never NULL.
{% import "system/checks.sql" as check %}
{{ check.not_null(["revenue", "order_count"]) }}
