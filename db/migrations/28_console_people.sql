-- The company's own people in the console. A user of a company (an inspector of its reports)
-- may have a console account with a role; an account is reached by an invitation, which the operator or
-- the company's admin makes, and whose one-time link only its holder knows (only its sha256 is kept).
-- Passwords are kept only as argon2id hashes (PHC strings). An account's e-mail signs in to one company.
CREATE TABLE user_accounts (
  company_id     uuid NOT NULL,
  user_id        uuid NOT NULL,
  email          text NOT NULL,
  role           text NOT NULL CHECK (role IN ('admin', 'inspector')),
  password_hash  text NOT NULL,
  -- Raised when the role or the password changes, or "Sign out everywhere": a session opened under an
  -- older value is no longer the person's (console_sessions.account_epoch).
  sessions_epoch integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (company_id, user_id),
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX user_accounts_email_key ON user_accounts (lower(email));

-- Valid until expires_at, usable once (used_at), revocable (revoked_at); rows stay as the record of them.
CREATE TABLE user_invitations (
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  id         uuid NOT NULL DEFAULT gen_random_uuid(),
  email      text NOT NULL,
  role       text NOT NULL CHECK (role IN ('admin', 'inspector')),
  token_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (company_id, id)
);
CREATE UNIQUE INDEX user_invitations_token_hash_key ON user_invitations (token_hash);

-- A session is a person's (company_id, user_id, the account's epoch when it opened) or the operator's
-- (the sha256 of the application token it was opened with: a changed token ends it). The sessions of
-- before had neither: their holders sign in again.
DELETE FROM console_sessions;
ALTER TABLE console_sessions
  ADD COLUMN company_id uuid,
  ADD COLUMN user_id uuid,
  ADD COLUMN account_epoch integer,
  ADD COLUMN app_token_hash bytea,
  ADD CONSTRAINT console_sessions_whose CHECK (
    (user_id IS NULL AND company_id IS NULL AND account_epoch IS NULL AND app_token_hash IS NOT NULL)
    OR (user_id IS NOT NULL AND company_id IS NOT NULL AND account_epoch IS NOT NULL AND app_token_hash IS NULL)
  );

-- Failed sign-ins per account and per client address (keyed by the sha256 of "account:<e-mail>",
-- "address:<ip>"): a window opens at the first failure; at its limit, sign-ins of the key are refused
-- until the window ends. Shared by every serving process.
CREATE TABLE console_sign_in_failures (
  key_hash     bytea PRIMARY KEY,
  window_start timestamptz NOT NULL,
  failures     integer NOT NULL
);
CREATE INDEX console_sign_in_failures_window ON console_sign_in_failures (window_start);
