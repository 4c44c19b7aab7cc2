import { expect } from 'chai';
import pg from 'pg';
import { ChangeFeed } from '../../src/db/change-feed.js';

/** What the test sees of each LISTEN connection the feed opens: its queries, the barriers to answer. */
interface Connection {
  client: pg.Client;
  queries: string[];
  /** The barriers sent and not answered yet, in order. */
  barriers: { answer(): void; fail(): void }[];
  ended: boolean;
}

/**
 * pg.Client's connect, query and end, in place of PostgreSQL: every connection opened is recorded, its
 * connect succeeds (or is refused, when the test says so) and its queries are answered by the test.
 */
function fakeConnections() {
  const proto = pg.Client.prototype as unknown as Record<'connect' | 'query' | 'end', unknown>;
  const real = { connect: proto.connect, query: proto.query, end: proto.end };
  const state = { made: [] as Connection[], refuse: false };
  const of = (client: pg.Client) => state.made.find((c) => c.client === client)!;
  proto.connect = function (this: pg.Client) {
    state.made.push({ client: this, queries: [], barriers: [], ended: false });
    return state.refuse ? Promise.reject(new Error('connection refused')) : Promise.resolve();
  };
  proto.query = function (this: pg.Client, query: string | { text: string }) {
    const connection = of(this);
    const text = typeof query === 'string' ? query : query.text;
    connection.queries.push(text);
    if (text !== '') return Promise.resolve({ rows: [] });
    return new Promise((resolve, reject) => connection.barriers.push({ answer: () => resolve({}), fail: reject }));
  };
  proto.end = function (this: pg.Client) {
    of(this).ended = true;
    return Promise.resolve();
  };
  return { state, restore: () => Object.assign(proto, real) };
}

/** db/change-feed.ts alone: its LISTEN connections are fakes (fakeConnections), so no PostgreSQL is needed. */
describe('ChangeFeed', () => {
  const feeds: ChangeFeed[] = [];
  let fake: ReturnType<typeof fakeConnections>;
  beforeEach(() => (fake = fakeConnections()));

  function feed(): ChangeFeed {
    const made = new ChangeFeed({ connectionString: 'postgres://nowhere/none' });
    feeds.push(made);
    return made;
  }

  const lastConnection = () => fake.state.made.at(-1)!;
  const notify = (channel: string, payload: string) =>
    lastConnection().client.emit('notification', { channel, payload });
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  afterEach(async () => {
    await Promise.all(feeds.splice(0).map((f) => f.close()));
    fake.restore();
  });

  it('listens on the channels registered, and hands each notification to the handlers of its channel', async () => {
    const f = feed();
    const keys: string[] = [];
    const things: string[] = [];
    const stop = f.on('keys_changed', (payload) => keys.push(payload));
    f.on('things_changed', (payload) => things.push(payload));
    expect(await f.ready(1_000)).to.equal(true);
    expect(lastConnection().queries).to.deep.equal(['LISTEN keys_changed; LISTEN things_changed']);
    notify('keys_changed', 'k1');
    notify('things_changed', 'c r');
    stop();
    notify('keys_changed', 'k2');
    expect(keys).to.deep.equal(['k1']);
    expect(things).to.deep.equal(['c r']);
  });

  it('listens on a channel registered while it listens, and sends the next barrier after that LISTEN', async () => {
    const f = feed();
    f.on('keys_changed', () => undefined);
    await f.ready(1_000);
    const before = f.barrier();
    await nextTurn();
    const late: string[] = [];
    f.on('things_changed', (payload) => late.push(payload));
    expect(lastConnection().queries).to.deep.equal(['LISTEN keys_changed', '', 'LISTEN things_changed']);
    lastConnection().barriers[0]!.answer();
    expect(await before).to.equal(true);
    // A request of the new channel arriving now waits for a barrier sent after the LISTEN.
    const after = f.barrier();
    await nextTurn();
    expect(lastConnection().queries.at(-1)).to.equal('');
    expect(lastConnection().barriers).to.have.lengthOf(2);
    lastConnection().barriers[1]!.answer();
    expect(await after).to.equal(true);
    notify('things_changed', 'c r');
    expect(late).to.deep.equal(['c r']);
  });

  it('completes a barrier once a round trip sent after the request arrived has come back', async () => {
    const f = feed();
    await f.ready(1_000);
    const arrived = performance.now();
    let done: boolean | undefined;
    void f.barrier(arrived).then((ok) => (done = ok));
    await nextTurn();
    expect(lastConnection().barriers).to.have.lengthOf(1);
    expect(done).to.equal(undefined);
    lastConnection().barriers[0]!.answer();
    await nextTurn();
    expect(done).to.equal(true);
    // A request that arrived before that barrier was sent needs no other, even while a later one is in flight.
    void f.barrier(performance.now());
    await nextTurn();
    expect(lastConnection().barriers).to.have.lengthOf(2);
    let early: boolean | undefined;
    void f.barrier(arrived).then((ok) => (early = ok));
    await nextTurn();
    expect(early).to.equal(true);
    expect(lastConnection().barriers).to.have.lengthOf(2);
  });

  it('shares the barrier in flight with requests that arrived before it was sent, and the next one with those after', async () => {
    const f = feed();
    await f.ready(1_000);
    const arrived = performance.now();
    const first = f.barrier(arrived);
    await nextTurn();
    const later = [f.barrier(), f.barrier(), f.barrier()];
    // One that arrived before the barrier in flight was sent shares that one.
    const early = f.barrier(arrived);
    await nextTurn();
    expect(lastConnection().barriers, 'the later ones wait for the first').to.have.lengthOf(1);
    lastConnection().barriers[0]!.answer();
    expect(await Promise.all([first, early])).to.deep.equal([true, true]);
    await nextTurn();
    expect(lastConnection().barriers, 'one more, shared').to.have.lengthOf(2);
    lastConnection().barriers[1]!.answer();
    expect(await Promise.all(later)).to.deep.equal([true, true, true]);
  });

  it('tells the caches to forget and fails barriers when the connection is lost, then listens again', async () => {
    const f = feed();
    await f.ready(1_000);
    let resets = 0;
    f.onReset(() => resets++);
    const lost = lastConnection();
    lost.client.emit('error', new Error('terminated'));
    expect(resets).to.equal(1);
    expect(lost.ended).to.equal(true);
    expect(f.listening).to.equal(false);
    expect(await f.barrier()).to.equal(false);
    expect(await f.ready(3_000), 'a new connection').to.equal(true);
    expect(lastConnection()).to.not.equal(lost);
  });

  it('drops a connection whose barrier fails (it cannot be trusted to deliver), and forgets', async () => {
    const f = feed();
    await f.ready(1_000);
    let resets = 0;
    f.onReset(() => resets++);
    const barrier = f.barrier();
    await nextTurn();
    lastConnection().barriers[0]!.fail();
    expect(await barrier).to.equal(false);
    expect(resets).to.equal(1);
    expect(f.listening).to.equal(false);
  });

  it('never listens while the database refuses the connection, and asks again no more after close', async () => {
    fake.state.refuse = true;
    const f = feed();
    expect(await f.ready(100)).to.equal(false);
    expect(await f.barrier()).to.equal(false);
    await f.close();
    const tried = fake.state.made.length;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(fake.state.made).to.have.lengthOf(tried);
  });
});
