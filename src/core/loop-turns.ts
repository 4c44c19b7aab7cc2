import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * From this many bytes on, a request's work gives the event loop a turn between its steps (the body
 * parsed; the write sent to the database): each step of a large one is milliseconds of the loop's one
 * thread, and run back to back they would keep every other company's requests waiting for all of
 * them at once, not for one.
 */
export const LOOP_TURN_BYTES = 64 * 1024;

/** Resolves on the event loop's next turn (after the I/O waiting now) when `bytes` is LOOP_TURN_BYTES or more, else at once. */
export function turnFor(bytes: number): Promise<void> | undefined {
  return bytes >= LOOP_TURN_BYTES ? nextTurn() : undefined;
}
