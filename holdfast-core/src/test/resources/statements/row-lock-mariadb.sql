-- forUpdate, no wait; binds [A-1]
SET STATEMENT lock_wait_timeout=0 FOR SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE NOWAIT;

-- forUpdate, skip locked; binds [A-1]
SET STATEMENT lock_wait_timeout=0 FOR SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE SKIP LOCKED;

-- forUpdate, at most 1.5 s; binds [A-1]
SET STATEMENT max_statement_time=1.500, innodb_lock_wait_timeout=2, lock_wait_timeout=2 FOR SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE;

-- forUpdate, at most 0.25 s; binds [A-1]
SET STATEMENT max_statement_time=0.250, innodb_lock_wait_timeout=1, lock_wait_timeout=1 FOR SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE;

