-- The design notes' fourteen days: 2026-02-01..2026-02-14 sum to 51,820,000 won and
-- 2026-02-09..2026-02-11 to 8,420,000; the rest of February (2026-02-16..2026-02-28) arrives
-- in chapter 7; 2026-02-15 has none. Each call inserts the days between :start and :end.
-- Each day has three orders; the third was sent twice, first with a wrong amount, then
-- amended (a later created_at wins).
WITH totals(ds, total) AS (
    VALUES (DATE '2026-02-01', 3480000), (DATE '2026-02-02', 3920000), (DATE '2026-02-03', 4150000),
           (DATE '2026-02-04', 3610000), (DATE '2026-02-05', 3870000), (DATE '2026-02-06', 4420000),
           (DATE '2026-02-07', 4980000), (DATE '2026-02-08', 4310000), (DATE '2026-02-09', 2730000),
           (DATE '2026-02-10', 2840000), (DATE '2026-02-11', 2850000), (DATE '2026-02-12', 3560000),
           (DATE '2026-02-13', 3710000), (DATE '2026-02-14', 3390000),
           (DATE '2026-02-16', 3650000), (DATE '2026-02-17', 3820000), (DATE '2026-02-18', 4010000),
           (DATE '2026-02-19', 3740000), (DATE '2026-02-20', 4260000), (DATE '2026-02-21', 4890000),
           (DATE '2026-02-22', 4170000), (DATE '2026-02-23', 3580000), (DATE '2026-02-24', 3730000),
           (DATE '2026-02-25', 3960000), (DATE '2026-02-26', 4120000), (DATE '2026-02-27', 4540000),
           (DATE '2026-02-28', 5030000)
),
parts AS (
    SELECT ds, total * 40 / 100 AS first, total * 35 / 100 AS second,
           total - total * 40 / 100 - total * 35 / 100 AS third
    FROM totals
    WHERE ds BETWEEN :start AND :end
)
INSERT INTO orders (order_id, order_date, amount, created_at)
SELECT 'o-' || to_char(ds, 'YYYYMMDD') || '-1', ds, first, ds + TIME '09:00:00' FROM parts
UNION ALL
SELECT 'o-' || to_char(ds, 'YYYYMMDD') || '-2', ds, second, ds + TIME '13:00:00' FROM parts
UNION ALL
SELECT 'o-' || to_char(ds, 'YYYYMMDD') || '-3', ds, third + 50000, ds + TIME '18:00:00' FROM parts
UNION ALL
SELECT 'o-' || to_char(ds, 'YYYYMMDD') || '-3', ds, third, ds + TIME '18:05:00' FROM parts
