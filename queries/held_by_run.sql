SELECT ds FROM reservations WHERE run_id = :run_id ORDER BY ds
