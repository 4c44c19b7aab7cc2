import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until `condition()` holds (or resolves true), checking every 20 ms; throws naming `what` after `timeoutMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** A promise and the function that settles it: lets a test decide when a receiver answers. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
