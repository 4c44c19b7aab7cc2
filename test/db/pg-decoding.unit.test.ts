import { expect } from 'chai';
import { createRequire } from 'node:module';

/** pg-protocol's reader of a row's fields, as pg loads it (patched at install: patches/pg-protocol+1.16.1.patch). */
interface BufferReader {
  setBuffer(offset: number, buffer: Buffer): void;
  string(length: number): string;
  offset: number;
}
const require = createRequire(createRequire(import.meta.url).resolve('pg'));
const { BufferReader } = require('pg-protocol/dist/buffer-reader.js') as { BufferReader: new () => BufferReader };

/**
 * pg decodes every text field of every row on the event loop. The patch decodes a long well-formed one
 * by transcoding (V8's decoder took 4.4 ms per MiB of text beyond ASCII, a maximal page's reports
 * tens of ms); what it decodes must be exactly what the unpatched reader decoded.
 */
describe('pg-protocol field decoding (patched)', () => {
  it('is patched: long text is transcoded', () => {
    expect(BufferReader.prototype.string.toString()).to.include('transcode(');
  });

  it('decodes short and long fields, ASCII and beyond, at any offset, exactly as Buffer#toString does', () => {
    const fields = ['abc', '€é😀'.repeat(5_000), 'x'.repeat(20_000), `${'ß'.repeat(9_000)}😀`, ''];
    const buffer = Buffer.concat([Buffer.from('pre'), ...fields.map((f) => Buffer.from(f)), Buffer.from('post')]);
    const reader = new BufferReader();
    reader.setBuffer(3, buffer);
    for (const field of fields) expect(reader.string(Buffer.byteLength(field))).to.equal(field);
    expect(reader.string(4)).to.equal('post');
  });

  it('decodes bytes that are not UTF-8 as before (replacement characters), long ones included', () => {
    const bytes = Buffer.concat([Buffer.alloc(20_000, 0x61), Buffer.from([0xff, 0xc0, 0xed, 0xa0, 0x80])]);
    const reader = new BufferReader();
    reader.setBuffer(0, bytes);
    expect(reader.string(bytes.length)).to.equal(bytes.toString('utf8'));
  });
});
