-- A month's row of the demo's monthly_revenue (chapter 7), 0 before it is built. Not in
-- queries/: the built-in schema, which those are prepared against, has no such table.
SELECT coalesce(sum(revenue), 0) AS revenue FROM monthly_revenue WHERE ds = :ds
