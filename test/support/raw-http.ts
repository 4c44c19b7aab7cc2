import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** An HTTP answer read off a raw connection. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** From the first byte sent until the server closed the connection (or the wait ended). */
  ms: number;
}

/** The last HTTP answer in text read from a connection (a "100 Continue" may precede it). */
export function lastAnswer(text: string, ms: number): Answer {
  const start = text.lastIndexOf('HTTP/1.1 ');
  const [head = '', body = ''] = text.slice(start).split(/\r\n\r\n(.*)/s);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body, ms };
}

export interface Conversation {
  /** Everything the server sent, as latin1 text. */
  text: string;
  ms: number;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
}

/**
 * Sends `head` on a fresh connection, then, with `trickle`, one more byte every trickle ms, and reads
 * until the server closes the connection, at most `waitMs` (the socket is destroyed whatever happens).
 * Supertest cannot send what these tests send: a request target in absolute form, a body cut short.
 */
export async function converse(
  port: number,
  head: string,
  { trickle, waitMs = 15_000 }: { trickle?: number; waitMs?: number } = {},
): Promise<Conversation> {
  const socket = net.connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closing = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  socket.write(head);
  const dripping = trickle ? setInterval(() => socket.writable && socket.write(' '), trickle) : undefined;
  try {
    await Promise.race([closing, sleep(waitMs)]);
    return { text, ms: Date.now() - started, closed };
  } finally {
    clearInterval(dripping);
    socket.destroy();
  }
}

/** The last answer of a conversation (see converse). */
export async function answer(
  port: number,
  head: string,
  options?: { trickle?: number; waitMs?: number },
): Promise<Answer> {
  const { text, ms } = await converse(port, head, options);
  return lastAnswer(text, ms);
}
