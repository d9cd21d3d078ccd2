-- `sqlrun generate`'s orders in one COPY (see insert_order.sql for SQLite's row at a time).
COPY orders (order_id, order_date, amount, created_at) FROM STDIN
