// An instant shown as UTC to the second ("2026-03-14 09:30:05 UTC"), readable without script.

export function utcText(iso: string): string {
  const utc = new Date(iso).toISOString();
  return `${utc.slice(0, 10)} ${utc.slice(11, 19)} UTC`;
}

/**
 * An instant: UTC to the second, and on hover (title); console.js writes it in the viewer's time zone
 * from `datetime`.
 */
export function Time({ at }: { at: string }) {
  const text = utcText(at);
  return (
    <time datetime={`${new Date(at).toISOString().slice(0, 19)}Z`} title={text}>
      {text}
    </time>
  );
}
