// The value of one series ("name{label=...}") in the Prometheus text format, 0 when absent.

export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
    return match?.[1] === name && wanted.every((w) => (match[2] ?? '').split(',').includes(w));
  });
  return line === undefined ? 0 : Number(line.split(' ').pop());
}
