import { expect } from 'chai';
import fc from 'fast-check';
import { formatInvoiceItem, joinList, parseInvoiceItem, toList } from '../../src/reports/field-values.js';

/** Text a description can be: non-blank, without surrounding spaces or line breaks (the shape is one line). */
const description = fc
  .string({ minLength: 1, maxLength: 40 })
  .filter((s) => s.trim() === s && s !== '' && !/[\n\r\u2028\u2029]/.test(s));
const cents = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

describe('report fields', () => {
  describe('toList', () => {
    it('takes a string as one value and an array as several, trimmed, blank ones dropped, in order', () => {
      expect(toList(undefined)).to.deep.equal([]);
      expect(toList('  Jordan Smith ')).to.deep.equal(['Jordan Smith']);
      expect(toList(['Jordan', ' ', '', ' Casey\t'])).to.deep.equal(['Jordan', 'Casey']);
      expect(toList('   ')).to.deep.equal([]);
    });

    it('keeps exactly the non-blank entries, trimmed, whatever they are; a string as an array of one', () => {
      fc.assert(
        fc.property(fc.array(fc.string()), (values) => {
          expect(toList(values)).to.deep.equal(values.map((v) => v.trim()).filter((v) => v !== ''));
        }),
      );
      fc.assert(
        fc.property(fc.string(), (value) => {
          expect(toList(value)).to.deep.equal(toList([value]));
        }),
      );
    });
  });

  it('joinList shows several values joined with a comma and a space', () => {
    expect(joinList([])).to.equal('');
    expect(joinList(['Jordan Smith'])).to.equal('Jordan Smith');
    expect(joinList(['Jordan Smith', 'Casey Smith'])).to.equal('Jordan Smith, Casey Smith');
  });

  describe('invoice items', () => {
    it('parses "<Description>: $<Price>" with thousands commas and up to two decimals', () => {
      expect(parseInvoiceItem('Radon test: $150')).to.deep.equal({ description: 'Radon test', priceCents: 15000 });
      expect(parseInvoiceItem('Sewer scope: $1,250.00')).to.deep.equal({
        description: 'Sewer scope',
        priceCents: 125000,
      });
      expect(parseInvoiceItem('Fee: $0')).to.deep.equal({ description: 'Fee', priceCents: 0 });
      expect(parseInvoiceItem('  Pool: $1,000,000.5 ')).to.deep.equal({ description: 'Pool', priceCents: 100000050 });
      expect(parseInvoiceItem('Note: $5: $12.34')).to.deep.equal({ description: 'Note: $5', priceCents: 1234 });
    });

    it('refuses any other shape', () => {
      const refused = [
        'Radon test: $12.345',
        'Radon test: $.50',
        'Radon test: 150',
        'Radon test $150',
        ': $150',
        '   : $150',
        'Radon test: $1,25',
        'Radon test: $1,2500',
        'Radon test: $150.',
        'Radon test: $-5',
        'Radon\ntest: $5',
        `Too much: $${'9'.repeat(20)}`,
      ];
      for (const text of refused) expect(parseInvoiceItem(text), text).to.equal(undefined);
    });

    it('formats the canonical form: thousands commas and two decimals', () => {
      expect(formatInvoiceItem({ description: 'Sewer scope', priceCents: 125050 })).to.equal('Sewer scope: $1,250.50');
      expect(formatInvoiceItem({ description: 'Fee', priceCents: 7 })).to.equal('Fee: $0.07');
    });

    it('reads back every item it formats', () => {
      fc.assert(
        fc.property(description, cents, (text, priceCents) => {
          const item = { description: text, priceCents };
          expect(parseInvoiceItem(formatInvoiceItem(item))).to.deep.equal(item);
        }),
      );
    });

    it('keeps the price of any accepted text exactly, in whole cents', () => {
      const price = fc.tuple(fc.nat({ max: 10 ** 9 }), fc.constantFrom('', '.5', '.05', '.50', '.99'));
      fc.assert(
        fc.property(description, price, (text, [dollars, decimals]) => {
          const item = parseInvoiceItem(`${text}: $${dollars}${decimals}`);
          const expected = dollars * 100 + Math.round(Number(`0${decimals}`) * 100);
          expect(item).to.deep.equal({ description: text, priceCents: expected });
        }),
      );
    });
  });
});
