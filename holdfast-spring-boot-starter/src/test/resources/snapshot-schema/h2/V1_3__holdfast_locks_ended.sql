-- What ended each row's last lock, so that a refused lock id can be told exactly what happened:
-- released by its owner, broken by an operator, replaced by the owner's re-acquire, or taken over
-- after it expired. Only the latest ended lock of a resource is kept.
ALTER TABLE ${holdfast_locks_table} ADD COLUMN IF NOT EXISTS ended_lock_id VARCHAR(32);
ALTER TABLE ${holdfast_locks_table} ADD COLUMN IF NOT EXISTS ended_owner VARCHAR(400);
ALTER TABLE ${holdfast_locks_table} ADD COLUMN IF NOT EXISTS ended_reason VARCHAR(16);
ALTER TABLE ${holdfast_locks_table} ADD COLUMN IF NOT EXISTS ended_by VARCHAR(400);
ALTER TABLE ${holdfast_locks_table} ADD COLUMN IF NOT EXISTS ended_at TIMESTAMP(6) WITH TIME ZONE;
CREATE INDEX IF NOT EXISTS ${holdfast_locks_table}_ended_ix ON ${holdfast_locks_table} (ended_lock_id);
