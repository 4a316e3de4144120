-- update of two columns
UPDATE purchase_order SET street = ?, city = ?, version = version + 1, modified_by = ?, modified = HOLDFAST_CLOCK_TIMESTAMP() WHERE order_no = ? AND version = ?;

-- update of the version alone (a root bump)
UPDATE purchase_order SET version = version + 1, modified_by = ?, modified = HOLDFAST_CLOCK_TIMESTAMP() WHERE order_no = ? AND version = ?;

-- delete
DELETE FROM purchase_order WHERE order_no = ? AND version = ?;

-- read
SELECT version, modified_by, modified FROM purchase_order WHERE order_no = ?;

-- explain a refusal
SELECT version, modified_by, modified FROM purchase_order WHERE order_no = ?;

-- verifyUnchanged (read-set check, shared lock)
SELECT version, modified_by, modified FROM purchase_order WHERE order_no = ? FOR UPDATE;

