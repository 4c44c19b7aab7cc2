-- The console's sign-ins. The cookie holds a random token; only its sha256 is kept, so a copy of the
-- table signs no one in. Each session has its CSRF token, which every state-changing form carries.
-- Signing out deletes the row; rows past expires_at are refused and swept.
CREATE TABLE console_sessions (
  token_hash bytea PRIMARY KEY,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
