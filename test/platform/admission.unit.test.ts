import { expect } from 'chai';
import { Admission, AdmissionRefused, LENT_BYTES, type AdmissionOptions } from '../../src/platform/limits/admission.js';

const KB = 1024;

/** platform/limits/admission.ts alone: small shares, and a loop whose load the test sets. */
function admission(options: Partial<AdmissionOptions> = {}) {
  const loop = { isBusy: false, busy: () => loop.isBusy };
  const a = new Admission({
    perCompany: 2,
    companyBytes: 100 * KB,
    processBytes: 1000 * KB,
    maxWaiting: 8,
    waitMillis: 5_000,
    loop,
    ...options,
  });
  return { a, loop };
}

/** Grants come from the loop's check phase (setImmediate), never in the turn of the release. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Whether the admission has settled (granted or refused) by the next turn of the loop. */
async function settled(admitted: Promise<unknown>): Promise<boolean> {
  let done = false;
  admitted.then(
    () => (done = true),
    () => (done = true),
  );
  await nextTurn();
  await nextTurn();
  return done;
}

describe('Admission', () => {
  it("admits perCompany of a company's requests while another company is at work; the next waits for one to end", async () => {
    const { a } = admission();
    a.tryAdmit('other', 0);
    const first = await a.admit('a', KB);
    await a.admit('a', KB);
    const third = a.admit('a', KB);
    expect(await settled(third)).to.equal(false);
    expect(a.load('a')).to.deep.include({ inFlight: 2, waiting: 1 });
    first();
    expect(await settled(third)).to.equal(true);
    expect(a.load('a')).to.deep.include({ inFlight: 2, waiting: 0 });
  });

  it('lends a company alone perCompanyAlone places, and no more', async () => {
    const { a } = admission({ perCompanyAlone: 3 });
    for (let i = 0; i < 3; i++) expect(a.tryAdmit('alone', KB), `request ${i + 1}`).to.be.a('function');
    expect(a.tryAdmit('alone', KB)).to.equal(undefined);
  });

  it("bounds a company's bytes in flight, lent LENT_BYTES times more while it is alone, always admitting its first request", () => {
    const lent = LENT_BYTES * 100 * KB;
    const alone = admission({ perCompany: 100 }).a;
    const first = alone.tryAdmit('a', lent + KB);
    expect(first, 'a first request of any size').to.be.a('function');
    expect(alone.tryAdmit('a', 1)).to.equal(undefined);
    first!();
    expect(alone.tryAdmit('a', lent - KB)).to.be.a('function');
    expect(alone.tryAdmit('a', KB), 'up to the lent bytes').to.be.a('function');
    expect(alone.tryAdmit('a', 1)).to.equal(undefined);
    const shared = admission({ perCompany: 100 }).a;
    shared.tryAdmit('other', 0);
    expect(shared.tryAdmit('a', 60 * KB)).to.be.a('function');
    expect(shared.tryAdmit('a', 41 * KB), 'another company at work: its own share').to.equal(undefined);
    expect(shared.tryAdmit('a', 40 * KB)).to.be.a('function');
  });

  it("bounds the process's bytes in flight, all companies together", () => {
    const { a } = admission({ perCompany: 100, companyBytes: 1000 * KB, processBytes: 300 * KB });
    expect(a.tryAdmit('a', 200 * KB)).to.be.a('function');
    expect(a.tryAdmit('b', 101 * KB)).to.equal(undefined);
    expect(a.tryAdmit('b', 100 * KB)).to.be.a('function');
  });

  it("refuses at once past maxWaiting of the company's requests waiting, others' queues apart", async () => {
    const { a } = admission({ perCompany: 1, perCompanyAlone: 1, maxWaiting: 2, waitMillis: 200 });
    await a.admit('a', KB);
    const waiting = [a.admit('a', KB), a.admit('a', KB)].map((w) => w.catch(() => 'refused later'));
    const refused = await a.admit('a', KB).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(AdmissionRefused).and.to.have.property('reason', 'queue full');
    expect(await settled(a.admit('b', KB))).to.equal(true);
    expect(await Promise.race([...waiting, nextTurn().then(() => 'waiting')])).to.equal('waiting');
  });

  it('refuses a request that waited between half and all of waitMillis', async () => {
    const { a } = admission({ perCompany: 1, perCompanyAlone: 1, waitMillis: 60, random: () => 0 });
    await a.admit('a', KB);
    const started = Date.now();
    const refused = await a.admit('a', KB).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(AdmissionRefused).and.to.have.property('reason', 'waited too long');
    expect(Date.now() - started).to.be.within(25, 55);
    expect(a.load('a').waiting).to.equal(0);
  });

  it('serves the companies waiting in turn as bytes free up, first come first served within each', async () => {
    const { a } = admission({ perCompany: 100, companyBytes: 1000 * KB, processBytes: 100 * KB });
    const hold = await a.admit('x', 100 * KB);
    const order: string[] = [];
    const releases = new Map<string, () => void>();
    for (const name of ['a1', 'a2', 'a3', 'b1', 'b2']) {
      void a.admit(name[0]!, 60 * KB).then((release) => (order.push(name), releases.set(name, release)));
    }
    hold();
    // Each grant fills the process: the next one waits for its release.
    for (let i = 0; i < 5; i++) {
      await nextTurn();
      expect(order).to.have.lengthOf(i + 1);
      releases.get(order.at(-1)!)!();
    }
    expect(order).to.deep.equal(['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  it('holds back a company that moved more than its share of the bytes while the loop is busy, and only then', async () => {
    const { a, loop } = admission({ perCompany: 100, companyBytes: 1000 * KB });
    a.tryAdmit('light', KB)!();
    a.tryAdmit('heavy', 500 * KB)!();
    loop.isBusy = true;
    expect(a.tryAdmit('light', KB), 'under its share').to.be.a('function');
    const heavy = a.admit('heavy', KB);
    expect(await settled(heavy)).to.equal(false);
    loop.isBusy = false;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await settled(heavy)).to.equal(true);
  });
});
