-- name: daily_revenue_change
-- version: 1
-- model: daily_revenue
-- severity: warn
--
-- Revenue that moved by more than 90% against the average of the week before ("revenue
-- fell 90% overnight"): most often a source that arrived half-loaded.
{% import "system/checks.sql" as check %}
{{ check.change_against_recent("revenue", ratio=0.9, days=7) }}
