/**
 * At most this many characters of caller input in one message: an id, a path, a field name. Enough
 * for any restId the contract accepts (255) and any id the service issues (a UUID is 36), so those are
 * quoted whole; a path or field name of megabytes would otherwise make a message of megabytes, past
 * what openapi.yaml lets `error` hold.
 */
export const QUOTED_MAX_LENGTH = 256;

/**
 * Caller input as a message quotes it: whole when short, else its first `max - 1` characters and `…`.
 * Counted in UTF-16 units, which are never fewer than the characters JSON Schema's maxLength counts,
 * and never cut between the two halves of a surrogate pair (half of one is not well-formed text).
 */
export function quoted(text: string, max = QUOTED_MAX_LENGTH): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
