import { expect } from 'chai';
import { Batcher } from '../../src/db/batcher.js';
import { gate } from '../support/wait.js';

/** db/batcher.ts alone: which items leave together, with a run() that records its batches. */
describe('Batcher', () => {
  type Item = { name: string; key?: string; bytes: number };

  function batcher(maxBytes: number) {
    const batches: string[][] = [];
    const { opened, open } = gate();
    const b = new Batcher<Item, string>({
      run: async (items) => {
        batches.push(items.map((i) => i.name));
        await opened;
        return items.map((i) => ({ status: 'fulfilled', value: i.name }));
      },
      maxInFlight: 1,
      maxItems: 32,
      maxBytes,
      size: (i) => i.bytes,
      group: () => 'company',
      key: (i) => i.key,
      failsWaiting: () => false,
      waitMillis: 5000,
      tooLong: () => new Error('too long'),
    });
    return { b, batches, open };
  }

  it('sends consecutive items of one key waiting together in one batch, in the order they came', async () => {
    const { b, batches, open } = batcher(1000);
    const all = [
      { name: 'held', bytes: 1 },
      ...['a1', 'b1', 'a2', 'a3', 'b2'].map((name) => ({ name, key: name[0], bytes: 1 })),
    ];
    const answers = all.map((item) => b.submit(item));
    open();
    expect(await Promise.all(answers)).to.deep.equal(all.map((i) => i.name));
    expect(batches).to.deep.equal([['held'], ['a1', 'b1', 'a2', 'a3', 'b2']]);
  });

  it('never lets an item overtake an earlier one of its key that the byte budget left out', async () => {
    const { b, batches, open } = batcher(100);
    const all = [
      { name: 'held', bytes: 1 },
      { name: 'a1', key: 'a', bytes: 60 },
      { name: 'a2', key: 'a', bytes: 60 },
      { name: 'a3', key: 'a', bytes: 1 },
      { name: 'b1', key: 'b', bytes: 1 },
      { name: 'c1', bytes: 1 },
    ];
    const answers = all.map((item) => b.submit(item));
    open();
    await Promise.all(answers);
    // a2 does not fit beside a1: a3 waits behind it, b1 and c1 go on.
    expect(batches).to.deep.equal([['held'], ['a1', 'b1', 'c1'], ['a2', 'a3']]);
  });
});
