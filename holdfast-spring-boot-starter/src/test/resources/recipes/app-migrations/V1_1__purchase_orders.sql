-- An application's own migration, with the version of one of Holdfast's: each has a history of its own.
CREATE TABLE purchase_order (order_no VARCHAR(20) NOT NULL PRIMARY KEY);
