import { isUtf8 } from 'node:buffer';
import { refuse } from '../../core/errors.js';
import { findUnstorableText } from './no-nul.js';

/**
 * The well-formed sequences of UTF-8 that start with a byte of 0xC2 or more (Unicode 15, table 3-7):
 * [first byte from, to, second byte from, to, length]. Later bytes are always 0x80 to 0xBF.
 */
const SEQUENCES: [number, number, number, number, number][] = [
  [0xc2, 0xdf, 0x80, 0xbf, 2],
  [0xe0, 0xe0, 0xa0, 0xbf, 3],
  [0xe1, 0xec, 0x80, 0xbf, 3],
  [0xed, 0xed, 0x80, 0x9f, 3], // not the surrogates U+D800 to U+DFFF
  [0xee, 0xef, 0x80, 0xbf, 3],
  [0xf0, 0xf0, 0x90, 0xbf, 4],
  [0xf1, 0xf3, 0x80, 0xbf, 4],
  [0xf4, 0xf4, 0x80, 0x8f, 4], // not past U+10FFFF
];

/** The length of the well-formed UTF-8 sequence at bytes[i], or 0 when none starts there. */
function sequenceAt(bytes: Buffer, i: number): number {
  const first = bytes[i]!;
  if (first < 0x80) return 1;
  const [, , low, high, length] = SEQUENCES.find(([from, to]) => first >= from && first <= to) ?? [0, 0, 0, 0, 0];
  const second = bytes[i + 1];
  if (length === 0 || second === undefined || second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k];
    if (next === undefined || next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}

/**
 * UTF-8 bytes as text, each byte outside a well-formed sequence kept as a lone surrogate
 * (U+DC80 to U+DCFF, Python's "surrogateescape") instead of U+FFFD, so that after JSON.parse the
 * strings holding such bytes are the ill-formed ones, and a real U+FFFD is not mistaken for one.
 */
function decodeKeepingInvalidBytes(bytes: Buffer): string {
  let text = '';
  let start = 0;
  for (let i = 0; i < bytes.length;) {
    const length = sequenceAt(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    text += bytes.toString('utf8', start, i) + String.fromCharCode(0xdc00 + bytes[i]!);
    start = ++i;
  }
  return text + bytes.toString('utf8', start);
}

/**
 * Refuses (400) a UTF-8 body with bytes that are not UTF-8, before the parser decodes it, which would
 * replace them with U+FFFD and store a different text than was sent. The message names the field
 * that holds them.
 */
export function rejectInvalidUtf8(body: Buffer): void {
  if (isUtf8(body)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeKeepingInvalidBytes(body));
  } catch {
    return; // not JSON either: the parser refuses it as such
  }
  // A field named twice keeps only its last value, which may be the well-formed one: the body as a whole is named then.
  throw refuse.badRequest(findUnstorableText(parsed) ?? 'the body is not well-formed UTF-8');
}
