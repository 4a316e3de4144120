-- Who broke a lease (LeaseService.forceRelease) and when, so that its holder's next release or
-- renewal can say so; cleared by every ordinary release.
ALTER TABLE ${holdfast_leases_table} ADD COLUMN IF NOT EXISTS broken_by VARCHAR(400);
ALTER TABLE ${holdfast_leases_table} ADD COLUMN IF NOT EXISTS broken_at TIMESTAMP WITH TIME ZONE;
