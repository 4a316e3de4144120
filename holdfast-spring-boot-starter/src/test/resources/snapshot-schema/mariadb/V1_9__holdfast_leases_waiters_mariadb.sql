-- A release on MariaDB learns from the lease row whether a waiter may be queued: every refused
-- queued attempt raises waiters_until past the life of its queue entry, while it holds the row
-- lock. While that mark is past, a release is the plain one-row update; otherwise it is the
-- statement that hands the lease to the first live waiter.
ALTER TABLE ${holdfast_leases_table}
    ADD COLUMN IF NOT EXISTS waiters_until DATETIME(6) NULL;
