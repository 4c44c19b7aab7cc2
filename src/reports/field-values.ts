import { refuse } from '../core/errors.js';

/** Pure conversions between the API's field shapes and stored values. */

/** A string is one value, an array several; entries are trimmed and blank ones dropped. */
export function toList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.map((s) => s.trim()).filter((s) => s !== '');
}

/** Several values are shown joined with a comma and a space. */
export const joinList = (values: readonly string[]): string => values.join(', ');

export interface InvoiceItem {
  description: string;
  priceCents: number;
}

/** What the API says of an invoice item that has another shape (after the field's name). */
export const INVOICE_ITEM_SHAPE = 'must have the shape "<Description>: $<Price>", for example "Radon test: $150.00"';

const INVOICE_ITEM = /^(.+?): \$(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/;

/** Parses "<Description>: $<Price>" ("Sewer scope: $1,250.00"); undefined when it has another shape. */
export function parseInvoiceItem(text: string): InvoiceItem | undefined {
  const match = INVOICE_ITEM.exec(text.trim());
  if (!match) return undefined;
  const [, description, dollars, decimals = ''] = match;
  const description_ = description!.trim();
  if (description_ === '') return undefined;
  const priceCents = Number(dollars!.replaceAll(',', '')) * 100 + Number(decimals.padEnd(2, '0'));
  if (!Number.isSafeInteger(priceCents)) return undefined;
  return { description: description_, priceCents };
}

/** The canonical form of an invoice item: "Description: $1,250.00". */
export function formatInvoiceItem({ description, priceCents }: InvoiceItem): string {
  const dollars = Math.floor(priceCents / 100).toLocaleString('en-US');
  return `${description}: $${dollars}.${String(priceCents % 100).padStart(2, '0')}`;
}

/** The invoice items of an input, parsed; 400 naming the first that has another shape. */
export function parseInvoiceItems(value: string | string[] | undefined): InvoiceItem[] {
  return toList(value).map((text, i) => {
    const item = parseInvoiceItem(text);
    if (!item) throw refuse.badRequest(`invoiceItems[${i}] ${INVOICE_ITEM_SHAPE}`);
    return item;
  });
}
