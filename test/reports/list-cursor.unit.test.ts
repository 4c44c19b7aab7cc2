import { expect } from 'chai';
import fc from 'fast-check';
import { decodeCursor, encodeCursor, type ListCursor } from '../../src/reports/cursor.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const day = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`);
const instant = fc
  .tuple(day, fc.nat(23), fc.nat(59), fc.nat(59), fc.nat(999_999))
  .map(([d, h, m, s, us]) => `${d}T${pad(h)}:${pad(m)}:${pad(s)}.${pad(us, 6)}Z`);
const cursor: fc.Arbitrary<ListCursor> = fc.record({ date: day, createdAt: instant, id: fc.uuid() });

const written = (date: string, createdAt: string, id = '5b0c6e2e-0b1f-4d4e-9a6c-2f1d3c4b5a69') =>
  Buffer.from(JSON.stringify([date, createdAt, id])).toString('base64url');

describe('list cursors', () => {
  it('read back every position they are written from', () => {
    fc.assert(
      fc.property(cursor, (position) => {
        expect(decodeCursor(encodeCursor(position))).to.deep.equal(position);
      }),
    );
  });

  it('accept only the exact text the service wrote: anything else is no cursor', () => {
    // A cursor with one character changed, inserted or removed.
    const changed = fc
      .tuple(cursor, fc.nat(), fc.string({ maxLength: 1 }), fc.boolean())
      .map(([position, at, char, replace]) => {
        const text = encodeCursor(position);
        const i = at % (text.length + 1);
        return text.slice(0, i) + char + text.slice(replace ? i + 1 : i);
      });
    fc.assert(
      fc.property(fc.oneof(changed, fc.string()), (text) => {
        const position = decodeCursor(text);
        if (position !== undefined) expect(encodeCursor(position)).to.equal(text);
      }),
    );
    const text = written('2026-03-14', '2026-03-01T14:05:09.123456Z');
    expect(decodeCursor(text)).to.not.equal(undefined);
    for (const other of [`${text}=`, ` ${text}`, `${text}.`, text.slice(0, -1)])
      expect(decodeCursor(other), other).to.equal(undefined);
  });

  it('refuse days and instants that do not exist, or that PostgreSQL has not (year 0000)', () => {
    expect(decodeCursor(written('2024-02-29', '2024-02-29T23:59:59.999999Z'))).to.not.equal(undefined);
    const refused = [
      written('2023-02-29', '2024-01-01T00:00:00.000000Z'),
      written('1900-02-29', '2024-01-01T00:00:00.000000Z'),
      written('0000-01-01', '2024-01-01T00:00:00.000000Z'),
      written('2024-13-01', '2024-01-01T00:00:00.000000Z'),
      written('2024-04-31', '2024-01-01T00:00:00.000000Z'),
      written('2024-01-01', '0000-12-31T00:00:00.000000Z'),
      written('2024-01-01', '2024-01-01T24:00:00.000000Z'),
      written('2024-01-01', '2024-01-01T00:60:00.000000Z'),
      written('2024-01-01', '2024-01-01T00:00:60.000000Z'),
      written('2024-01-01', '2024-01-01T00:00:00.000Z'),
      written('2024-01-01', '2024-01-01T00:00:00.000000Z', 'not-a-uuid'),
      Buffer.from(JSON.stringify(['2024-01-01', '2024-01-01T00:00:00.000000Z'])).toString('base64url'),
      Buffer.from(JSON.stringify({ date: '2024-01-01' })).toString('base64url'),
      Buffer.from('not json').toString('base64url'),
    ];
    for (const text of refused)
      expect(decodeCursor(text), Buffer.from(text, 'base64url').toString()).to.equal(undefined);
  });
});
