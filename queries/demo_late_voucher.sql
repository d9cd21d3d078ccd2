-- A voucher for 2026-02-03 that arrives after the week's report went out.
INSERT INTO orders (order_id, order_date, amount, created_at)
VALUES ('voucher-20260203', '2026-02-03', 350000, '2026-02-20 10:00:00')
