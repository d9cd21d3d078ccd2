INSERT INTO orders (order_id, order_date, amount, created_at)
VALUES (:order_id, :order_date, :amount, :created_at)
