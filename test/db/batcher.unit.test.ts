import { expect } from 'chai';
import { Batcher, type BatcherOptions } from '../../src/db/batcher.js';

type Item = { name: string; group?: string; key?: string; bytes?: number; fails?: boolean };

/** A batch run() was called with, which the test ends when it likes: each item succeeds or fails, or the whole run throws. */
interface Run {
  names: string[];
  end(): void;
  throws(err: Error): void;
}

/**
 * db/batcher.ts alone: a batcher whose run() records each batch and waits for the test to end it, so
 * the test sees which items leave together, in which order, and what waits meanwhile.
 */
function batcher(options: Partial<BatcherOptions<Item, string>> = {}) {
  const runs: Run[] = [];
  const b = new Batcher<Item, string>({
    run: (items) =>
      new Promise((resolve, reject) => {
        runs.push({
          names: items.map((i) => i.name),
          end: () =>
            resolve(
              items.map((i) =>
                i.fails ? { status: 'rejected', reason: new Error(i.name) } : { status: 'fulfilled', value: i.name },
              ),
            ),
          throws: reject,
        });
      }),
    maxInFlight: 1,
    maxItems: 32,
    maxBytes: 1000,
    size: (i) => i.bytes ?? 1,
    group: (i) => i.group ?? 'company',
    key: (i) => i.key,
    failsWaiting: () => false,
    waitMillis: 5000,
    tooLong: () => new Error('too long'),
    ...options,
  });
  const submit = (...items: Item[]) => items.map((item) => b.submit(item));
  return { b, runs, submit, names: () => runs.map((r) => r.names) };
}

/** Lets the promises settled so far run their callbacks (the batcher sends the next batch in a finally). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('sends consecutive items of one key waiting together in one batch, in the order they came', async () => {
    const { runs, submit, names } = batcher();
    const all = [{ name: 'held' }, ...['a1', 'b1', 'a2', 'a3', 'b2'].map((name) => ({ name, key: name[0] }))];
    const answers = submit(...all);
    runs[0]!.end();
    await settle();
    runs[1]!.end();
    expect(await Promise.all(answers)).to.deep.equal(all.map((i) => i.name));
    expect(names()).to.deep.equal([['held'], ['a1', 'b1', 'a2', 'a3', 'b2']]);
  });

  it('never lets an item overtake an earlier one of its key that the byte budget left out', async () => {
    const { runs, submit, names } = batcher({ maxBytes: 100 });
    const answers = submit(
      { name: 'held' },
      { name: 'a1', key: 'a', bytes: 60 },
      { name: 'a2', key: 'a', bytes: 60 },
      { name: 'a3', key: 'a' },
      { name: 'b1', key: 'b' },
      { name: 'c1' },
    );
    for (let i = 0; i < 3; i++) {
      runs[i]!.end();
      await settle();
    }
    await Promise.all(answers);
    // a2 does not fit beside a1: a3 waits behind it, b1 and c1 go on.
    expect(names()).to.deep.equal([['held'], ['a1', 'b1', 'c1'], ['a2', 'a3']]);
  });

  it('sends an item alone at once when nothing is in flight, and at most maxItems in a batch', async () => {
    const { runs, submit, names } = batcher({ maxItems: 2 });
    submit({ name: 'first' });
    expect(names()).to.deep.equal([['first']]);
    submit({ name: 'x' }, { name: 'y' }, { name: 'z' });
    runs[0]!.end();
    await settle();
    expect(names()).to.deep.equal([['first'], ['x', 'y']]);
  });

  it('never puts items of two groups in one batch, and runs the groups at once up to maxInFlight', async () => {
    const { submit, names } = batcher({ maxInFlight: 2 });
    submit({ name: 'a1', group: 'a' }, { name: 'b1', group: 'b' }, { name: 'c1', group: 'c' });
    submit({ name: 'a2', group: 'a' }, { name: 'b2', group: 'b' });
    expect(names()).to.deep.equal([['a1'], ['b1']]);
  });

  it("sends a group whose batch ended behind the groups that waited meanwhile, so a deep queue never starves another's", async () => {
    const { runs, submit, names } = batcher({ maxItems: 1 });
    submit({ name: 'a1', group: 'a' }, { name: 'a2', group: 'a' }, { name: 'a3', group: 'a' });
    submit({ name: 'b1', group: 'b' });
    for (let i = 0; i < 3; i++) {
      runs[i]!.end();
      await settle();
    }
    expect(names()).to.deep.equal([['a1'], ['b1'], ['a2'], ['a3']]);
  });

  it('fails each item with its own outcome, the others of its batch answered', async () => {
    const { runs, submit } = batcher();
    const [, ok, failed] = submit({ name: 'held' }, { name: 'ok' }, { name: 'bad', fails: true });
    runs[0]!.end();
    await settle();
    expect(runs[1]!.names).to.deep.equal(['ok', 'bad']);
    runs[1]!.end();
    expect(await ok).to.equal('ok');
    expect(await failed!.catch((err: Error) => err.message)).to.equal('bad');
  });

  it('fails an item that waited waitMillis for its turn with tooLong(), and never sends it', async () => {
    const { runs, submit, names } = batcher({ waitMillis: 30 });
    const [, late] = submit({ name: 'held' }, { name: 'late' });
    expect(await late!.catch((err: Error) => err.message)).to.equal('too long');
    runs[0]!.end();
    await settle();
    expect(names()).to.deep.equal([['held']]);
  });

  it('fails the items waiting in every group with a failed batch when failsWaiting says they would fail the same way', async () => {
    const { runs, submit, names } = batcher({ maxItems: 1, failsWaiting: (err) => (err as Error).message === 'down' });
    const answers = submit({ name: 'a1', group: 'a' }, { name: 'a2', group: 'a' }, { name: 'b1', group: 'b' });
    runs[0]!.throws(new Error('down'));
    const outcomes = await Promise.all(answers.map((a) => a.catch((err: Error) => err.message)));
    expect(outcomes).to.deep.equal(['down', 'down', 'down']);
    expect(names()).to.deep.equal([['a1']]);
  });

  it('sends the items waiting as usual after a failed batch whose failure is its own', async () => {
    const { runs, submit, names } = batcher();
    const [first, second] = submit({ name: 'first' }, { name: 'second' });
    runs[0]!.throws(new Error('row locked'));
    expect(await first!.catch((err: Error) => err.message)).to.equal('row locked');
    await settle();
    runs[1]!.end();
    expect(await second).to.equal('second');
    expect(names()).to.deep.equal([['first'], ['second']]);
  });
});
