// The most characters of caller input quoted in one error message: enough for any restId or id the
// service issues, while a megabyte path or field name cannot make a megabyte message.

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
