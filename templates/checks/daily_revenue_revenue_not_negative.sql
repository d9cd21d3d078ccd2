-- name: daily_revenue_revenue_not_negative
-- version: 1
-- model: daily_revenue
-- severity: warn
--
-- A date's revenue below zero is worth a look, not a refusal: an order's amount may be
-- negative (a refund), so a quiet day with a large refund is a true negative total.
{% import "system/checks.sql" as check %}
{{ check.accepted_range("revenue", min=0) }}
