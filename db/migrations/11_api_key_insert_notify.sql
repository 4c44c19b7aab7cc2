-- Server processes also cache that a key hash is unknown (a flood of unknown or revoked keys then costs
-- no lookup per request). So a hash that becomes valid must be announced like one that stops being
-- valid: every key inserted, and a key row given another hash, notifies its new hash on the same channel
-- api_key_revoked, on commit, which drops it from every process's cache of unknown keys before the next
-- request that arrived after the commit is answered. The payload is the key's SHA-256 in hex, never the
-- key; migration 3's trigger still notifies the old hash of every UPDATE and DELETE.
-- A function of its own: migration 3's reads OLD, which an INSERT has not, and an empty payload would
-- make every process forget every key.
CREATE FUNCTION notify_api_key_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_revoked', encode(NEW.key_hash, 'hex'));
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_notify_created
  AFTER INSERT OR UPDATE OF key_hash ON api_keys
  FOR EACH ROW EXECUTE FUNCTION notify_api_key_created();
