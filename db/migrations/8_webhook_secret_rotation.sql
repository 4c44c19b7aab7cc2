-- Secret rotation with overlap: after a rotation the previous signing secret keeps signing (as a
-- second signature) until previous_secret_expires_at, decided by the database clock. A rotation
-- during an overlap replaces it, so the older one ends at once; setting a new address clears it.
ALTER TABLE integrations
  ADD COLUMN previous_webhook_secret text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD CONSTRAINT integrations_previous_secret_expires
    CHECK ((previous_webhook_secret IS NULL) = (previous_secret_expires_at IS NULL));

-- Test deliveries (POST /internal/companies/{companyId}/webhook/test) send a sample report that
-- exists nowhere: they are logged without a report, and a row without a report is a test.
ALTER TABLE webhook_deliveries ALTER COLUMN report_id DROP NOT NULL;
