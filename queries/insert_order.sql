INSERT INTO orders (order_id, order_date, amount, created_at) VALUES (?1, ?2, ?3, ?4)
