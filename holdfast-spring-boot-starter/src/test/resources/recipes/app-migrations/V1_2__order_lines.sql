-- An application's own migration, with the version of one of Holdfast's: each has a history of its own.
CREATE TABLE order_line (order_no VARCHAR(20) NOT NULL, line_no INT NOT NULL, PRIMARY KEY (order_no, line_no));
