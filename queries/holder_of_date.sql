SELECT run_id FROM reservations WHERE ds = :ds
