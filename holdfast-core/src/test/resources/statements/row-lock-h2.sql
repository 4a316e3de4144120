-- forUpdate, no wait; binds [A-1]
SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE NOWAIT;

-- forUpdate, skip locked; binds [A-1]
SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE SKIP LOCKED;

-- forUpdate, at most 1.5 s; binds [A-1]
SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE WAIT 0.100;

-- forUpdate, at most 0.25 s; binds [A-1]
SELECT 1 FROM purchase_order WHERE order_number = ? FOR UPDATE WAIT 0.100;

-- a longer bound is waited in statements of at most 100 ms

