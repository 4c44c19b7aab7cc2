/**
 * The largest report the contract allows (openapi.yaml, ReportInput): every field at its maximum
 * length and every array at its maximum number of entries, free text in a three-byte character (€)
 * so that it also takes the most bytes a code point of the Basic Multilingual Plane can, within the
 * 1 MiB a request body may have. Its 50 inspectors are users of the company with 320-character
 * names and addresses.
 */
import type { ReportInput } from '../../src/api-types.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
const WIDE = '€';
const wide = (chars: number) => WIDE.repeat(chars);
const ARRAY_MAX = 50;

/** A distinct e-mail address of exactly `length` characters. */
function email(tag: string, length: number): string {
  const domain = '@max.example';
  return `${tag}.${'x'.repeat(length - tag.length - 1 - domain.length)}${domain}`;
}

/** The 50 users a maximal report names as its inspectors. */
export function maximalInspectors(): { name: string; email: string }[] {
  return Array.from({ length: ARRAY_MAX }, (_, i) => ({
    name: `${String(i).padStart(2, '0')}${wide(318)}`,
    email: email(`inspector${String(i).padStart(2, '0')}`, 320),
  }));
}

/** The body of a maximal create with this restId (at most 255 characters), naming these inspectors. */
export function maximalReportBody(restId: string, inspectorEmails: string[]): string {
  const invoicePrice = ': $1';
  const report: ReportInput = {
    restId: restId.padEnd(255, '_'),
    fromRestService: wide(255),
    clientNames: Array.from({ length: ARRAY_MAX }, () => wide(320)),
    clientEmails: Array.from({ length: ARRAY_MAX }, (_, i) => email(`client${i}`, 320)),
    clientPhones: Array.from({ length: ARRAY_MAX }, () => wide(50)),
    inspectionDate: '2026-03-14',
    address: wide(1_000),
    yearBuilt: wide(20),
    squareFeet: wide(20),
    notes: wide(100_000),
    agentName: wide(320),
    agentEmail: email('agent', 320),
    agentPhone: wide(50),
    inspectorEmails: inspectorEmails.slice(0, ARRAY_MAX),
    invoiceItems: Array.from({ length: 200 }, () => `${wide(1_000 - invoicePrice.length)}${invoicePrice}`),
  };
  const body = JSON.stringify(report);
  const bytes = Buffer.byteLength(body);
  if (bytes > BODY_LIMIT_BYTES) throw new Error(`the maximal report is ${bytes} bytes, over the 1 MiB limit`);
  return body;
}
