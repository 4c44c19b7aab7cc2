import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { ChangeFeed } from '../../src/db/change-feed.js';
import { NotifiedCache, type Lookup } from '../../src/db/notified-cache.js';
import { databaseUrl, feedBackend, killChangeFeed, pool } from '../support/harness.js';
import { gate, until } from '../support/wait.js';

/**
 * The protocol of every cache on the change feed (db/notified-cache.ts), against the real PostgreSQL
 * and the real ChangeFeed, with nothing of the product around it: values in a table of this test's
 * own, each change committed with its notification in one statement, as the product's triggers do.
 * The channel is this test's own, as the table is.
 */
const TABLE = 'notified_cache_protocol';
const CHANNEL = 'notified_cache_protocol';

/** Commits value for key and, in the same statement (so on the same commit), notifies the key. */
async function write(key: string, value: string): Promise<void> {
  const { rowCount } = await pool().query(
    `WITH changed AS (
       INSERT INTO ${TABLE} (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value RETURNING key
     )
     SELECT pg_notify('${CHANNEL}', key) FROM changed`,
    [key, value],
  );
  expect(rowCount, 'written and notified').to.equal(1);
}

describe('notified cache: the protocol of every cache on the change feed', () => {
  let feed: ChangeFeed;
  let cache: NotifiedCache<string>;
  /** How many reads went to the database. */
  let reads = 0;

  const fromDatabase = async (key: string) => {
    reads++;
    const { rows } = await pool().query<{ value: string }>(`SELECT value FROM ${TABLE} WHERE key = $1`, [key]);
    return rows[0]!.value;
  };
  const lookup = (key: string, read = () => fromDatabase(key)): Lookup<string, string> => ({
    scope: key,
    read,
    keep: (value) => ({ value, group: 'test', size: 1 }),
  });
  const get = (key: string) => cache.get(key, lookup(key), performance.now());
  /** A new key written, its notification delivered (else it would overtake the first read of it). */
  const newKey = async (value = 'before') => {
    const key = `protocol ${randomUUID()}`;
    await write(key, value);
    expect(await feed.barrier(), 'the write is delivered').to.equal(true);
    return key;
  };
  /** A new key with a value, read once so that the cache holds it, and shown to be served from it. */
  const cachedKey = async (value = 'before') => {
    const key = await newKey(value);
    expect(await get(key)).to.equal(value);
    const before = reads;
    expect(await get(key)).to.equal(value);
    expect(reads, 'the second read is served from the cache').to.equal(before);
    return key;
  };
  /** A read of key in flight, held after it has read the database until `release()`. */
  const heldRead = async (key: string) => {
    const [hasRead, release] = [gate(), gate()];
    const answer = cache.get(
      key,
      lookup(key, async () => {
        const value = await fromDatabase(key);
        hasRead.open();
        await release.opened;
        return value;
      }),
      performance.now(),
    );
    await hasRead.opened;
    return { answer, release: release.open };
  };

  before(async () => {
    await pool().query(`CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value text NOT NULL)`);
    feed = new ChangeFeed({ connectionString: databaseUrl() });
    expect(await feed.ready(), 'the change feed listens').to.equal(true);
    cache = new NotifiedCache<string>({
      feed,
      channel: CHANNEL,
      changeOf: (key) => (key === '*' ? undefined : { scope: key, keys: [key] }),
      maxAgeMs: 60_000,
      budget: { total: 1_000, perGroup: 1_000 },
    });
  });
  after(async () => {
    cache?.close();
    await feed?.close();
    await pool().query(`DROP TABLE IF EXISTS ${TABLE}`);
  });
  beforeEach(async () => {
    expect(await feed.ready(), 'the change feed listens').to.equal(true);
  });

  it('the barrier: a change committed before a read began shows in that read, never the cached value', async () => {
    // Rounds of: cache a value, commit a change, read at once (its notification is still on its way).
    for (let round = 0; round < 20; round++) {
      const key = await cachedKey();
      await write(key, `after ${round}`);
      expect(await get(key), `round ${round}`).to.equal(`after ${round}`);
    }
  });

  it('a change that overtakes a read in flight: the read answers, but what it read is not kept', async () => {
    const key = await newKey();
    const { answer, release } = await heldRead(key);
    await write(key, 'after');
    expect(await feed.barrier(), 'the change is delivered while the read is in flight').to.equal(true);
    release();
    expect(await answer, 'the read answers its own request with what it read').to.equal('before');
    const before = reads;
    expect(await get(key), 'the next read does not get what the overtaken one read').to.equal('after');
    expect(reads, 'it asked the database').to.equal(before + 1);
  });

  it('a change of another scope does not stop a read in flight from being kept', async () => {
    const [key, other] = [await newKey(), await cachedKey()];
    const { answer, release } = await heldRead(key);
    await write(other, 'after');
    expect(await feed.barrier()).to.equal(true);
    release();
    expect(await answer).to.equal('before');
    const before = reads;
    expect(await get(key)).to.equal('before');
    expect(reads, 'kept: served from the cache').to.equal(before);
    expect(await get(other), 'the other key changed').to.equal('after');
  });

  it('requests for a key while its read is in flight join that read: a burst costs one database read', async () => {
    const key = await newKey();
    const { answer, release } = await heldRead(key);
    const before = reads;
    const joined = Array.from({ length: 20 }, () => get(key));
    await sleep(50);
    expect(reads, 'no read of their own while the first is in flight').to.equal(before);
    release();
    expect(await Promise.all([answer, ...joined])).to.deep.equal(Array(21).fill('before'));
    expect(reads).to.equal(before);
  });

  it('a request does not join a read that a change committed before it arrived overtook: it reads again', async () => {
    for (let round = 0; round < 10; round++) {
      const key = await newKey();
      const { answer, release } = await heldRead(key);
      // Committed, its notification still on its way: the barrier of the next request delivers it.
      await write(key, `after ${round}`);
      const before = reads;
      expect(await get(key), `round ${round}`).to.equal(`after ${round}`);
      expect(reads, 'it read the database').to.equal(before + 1);
      release();
      expect(await answer, 'the overtaken read answers its own request').to.equal('before');
    }
  });

  it('a lost feed: everything is forgotten, reads go to the database until it listens, then caching resumes', async () => {
    const [key, inFlight] = [await cachedKey(), await newKey()];
    const keys = [key, inFlight];
    const { answer, release } = await heldRead(inFlight);
    await killChangeFeed(feed);
    await until(() => !feed.listening, 'aware that the feed is lost', 5_000);
    expect(cache.held.entries, 'everything forgotten').to.equal(0);
    release();
    expect(await answer, 'the read in flight when the feed was lost answers').to.equal('before');
    // Committed while nobody listens: their notifications never reach this process.
    for (const k of keys) await write(k, 'while lost');
    for (let i = 0; i < 3; i++) {
      for (const k of keys) {
        const before = reads;
        expect(await get(k)).to.equal('while lost');
        expect(reads, 'from the database while the feed is lost').to.equal(before + 1);
      }
    }
    // Missed again: what was read while the feed was lost must not outlive its reconnection.
    for (const k of keys) await write(k, 'lost again');
    expect(feed.listening, 'all of the above happened while the feed was lost').to.equal(false);
    expect(cache.held.entries, 'nothing kept while the feed is lost').to.equal(0);

    expect(await feed.ready(), 'listens again after reconnecting').to.equal(true);
    for (const k of keys) expect(await get(k), 'no missed change hidden by a cached value').to.equal('lost again');
    const before = reads;
    for (const k of keys) expect(await get(k)).to.equal('lost again');
    expect(reads, 'cached again once it listens').to.equal(before);
  });

  it('a stalled event loop: a barrier answered while the process was busy past its wait still counts', async () => {
    const key = await cachedKey();
    const before = reads;
    const answer = get(key);
    // Microtasks only, so no socket is read before the stall: the barrier is sent, its answer is not read.
    for (let turn = 0; turn < 20; turn++) await Promise.resolve();
    const stallEnds = performance.now() + 800;
    while (performance.now() < stallEnds); // a long synchronous task, past the barrier's 500 ms
    expect(await answer).to.equal('before');
    expect(reads, 'served from the cache').to.equal(before);
    expect(feed.listening, 'the feed kept its connection').to.equal(true);
  });

  it('a frozen feed: no barrier answer in time, so no cached value is served; the database answers', async () => {
    const key = await cachedKey();
    // The backend of the feed's LISTEN connection stops: the change below is committed and notified,
    // but neither its notification nor the answer to any barrier can reach this process.
    const backend = feedBackend(feed);
    process.kill(backend, 'SIGSTOP');
    try {
      await write(key, 'while frozen');
      // Bounded here, so that the backend is let go even when the barrier never gives up.
      const answer = await Promise.race([get(key), sleep(3_000).then(() => 'no answer within 3 s')]);
      expect(answer, 'the barrier gave up (500 ms) and the database answered').to.equal('while frozen');
      expect(feed.listening, 'the frozen connection was dropped').to.equal(false);
      expect(cache.held.entries, 'everything forgotten').to.equal(0);
    } finally {
      process.kill(backend, 'SIGCONT');
    }
    expect(await feed.ready(), 'listens again after reconnecting').to.equal(true);
    expect(await get(key)).to.equal('while frozen');
    const before = reads;
    expect(await get(key)).to.equal('while frozen');
    expect(reads, 'cached again once it listens').to.equal(before);
  });
});
