-- name: daily_revenue_order_count_not_negative
-- version: 1
-- model: daily_revenue
-- severity: error
--
-- A count of orders is never below zero.
{% import "system/checks.sql" as check %}
{{ check.accepted_range("order_count", min=0) }}
