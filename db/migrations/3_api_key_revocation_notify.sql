-- Server processes cache API keys (hash → company). Revoking a key is deleting it (one key, the whole
-- integration, or a company by cascade), so the database itself announces every deletion and every
-- change of a key row on channel api_key_revoked, delivered to every listening process when the
-- transaction commits. Changes include last_used_at (written at most once a minute per key): a
-- process then reads the key afresh, which keeps the once-a-minute rule in the database's hands.
-- The payload is the key's SHA-256 in hex (never the key); '*' means "forget every key" (TRUNCATE).
CREATE FUNCTION notify_api_key_revoked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('api_key_revoked', '*');
  ELSE
    PERFORM pg_notify('api_key_revoked', encode(OLD.key_hash, 'hex'));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_notify_revoked
  AFTER DELETE OR UPDATE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION notify_api_key_revoked();

CREATE TRIGGER api_keys_notify_truncated
  AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_api_key_revoked();
