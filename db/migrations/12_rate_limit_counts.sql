-- Requests counted against each API key's budget (RATE_LIMIT_PER_MINUTE), per minute of the Unix
-- clock, shared by every process of a deployment: each process counts in memory and adds what it
-- counted here about once a second, reading back the total. UNLOGGED: the counts are worth nothing
-- after a crash (no WAL for a table written every second). Rows of past minutes are deleted by the
-- processes themselves.
CREATE UNLOGGED TABLE rate_limit_counts (
  company_id uuid NOT NULL,
  key_id uuid NOT NULL,
  window_minute bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (company_id, key_id, window_minute)
);
