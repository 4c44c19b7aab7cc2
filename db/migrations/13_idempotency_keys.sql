-- Idempotency-Key on POST /reports/new (draft-ietf-httpapi-idempotency-key-header): each key a company
-- sent in the last 24 hours, with a fingerprint of the body it came with, and either the request that
-- holds it now (`claim`, until `claimed_until`: then a retry may take it over) or the answer to replay.
-- A write commits only while its claim is current, in the same statement that records its answer, so a
-- key never makes two reports, whatever processes stop or retries overtake.
CREATE TABLE idempotency_keys (
  company_id    uuid NOT NULL REFERENCES companies ON DELETE CASCADE,
  key           text NOT NULL,
  fingerprint   bytea NOT NULL,
  claim         uuid,
  claimed_until timestamptz,
  -- The answer, once there is one: its status, and the report's id (200) or the error message.
  status        smallint,
  answer        text,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (company_id, key),
  CHECK ((claim IS NULL) = (status IS NOT NULL))
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
