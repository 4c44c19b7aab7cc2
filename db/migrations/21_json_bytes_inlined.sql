-- json_bytes (migration 9), the length of a value as JSON text, computed from json_object instead of
-- to_json. Every write of a report evaluates display_bytes, fifteen json_bytes calls. A SQL function
-- whose body is IMMUTABLE is inlined into the expression once per statement; migration 9's body called
-- to_json, which is only STABLE, so each call ran as a function of its own: about a third of a create's
-- time in PostgreSQL. json_object(text[]) and json_object(text[], text[]) are IMMUTABLE and escape
-- their keys and values as to_json escapes text (escape_json), so the lengths are the same for every
-- value and the rows stored need no rewrite. test/db/json-bytes.test.ts holds the two definitions
-- together and checks that both functions are inlined.
--
-- Not STRICT: a strict function is inlined only if its body is strict too, and an ARRAY[...] or
-- array_fill is not. No column passed to json_bytes is NULL (rest_id is passed through coalesce).

-- {"" : "<value>"} is the value's JSON and 7 bytes more.
CREATE OR REPLACE FUNCTION json_bytes(value text) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN octet_length(json_object(ARRAY['', value])::text) - 7;

-- {"" : <v1>, "" : <v2>, …} holds the n values' JSON with 6 bytes more each, less the 1 the array's
-- brackets and commas take: ["<v1>","<v2>",…] is the object's length - 6n + 1. An empty array is [].
CREATE OR REPLACE FUNCTION json_bytes(value text[]) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE cardinality(value)
           WHEN 0 THEN 2
           ELSE octet_length(json_object(array_fill(''::text, ARRAY[cardinality(value)]), value)::text)
                - 6 * cardinality(value) + 1
         END;
