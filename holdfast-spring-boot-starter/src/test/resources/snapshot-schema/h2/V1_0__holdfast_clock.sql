-- A clock that moves inside a transaction (H2's CURRENT_TIMESTAMP is fixed per transaction).
CREATE ALIAS IF NOT EXISTS HOLDFAST_CLOCK_TIMESTAMP FOR 'dev.holdfast.jdbc.dialect.H2Clock.clockTimestamp';
