import { expect } from 'chai';
import fc from 'fast-check';
import { toHttpError } from '../src/errors.js';

interface ValidatorItem {
  path: string;
  message: string;
  errorCode?: string;
}

/** An item of express-openapi-validator's error list: where, its message, and the schema keyword. */
const item = (path: string, keyword: string, message = 'is invalid'): ValidatorItem => ({
  path,
  message,
  errorCode: `${keyword}.openapi.validation`,
});

/** The validator's own checks of the query string name no schema keyword. */
const queryItem = (name: string, message: string): ValidatorItem => ({ path: `/query/${name}`, message });

/** What toHttpError makes of the validator's 400 with these items. */
const described = (...items: ValidatorItem[]) => {
  const error = toHttpError({ status: 400, errors: items }, { method: 'POST', path: '/reports/new' });
  expect(error.status).to.equal(400);
  return error.message;
};

describe('validation messages', () => {
  it('name a missing field, and an unknown one with its place', () => {
    expect(described(item('/body/clientNames', 'required', "must have required property 'clientNames'"))).to.equal(
      'clientNames is required',
    );
    expect(described(item('/body/inspectorEmail', 'additionalProperties'))).to.equal('unknown field: inspectorEmail');
    expect(described(item('/body/restId', 'false schema'))).to.equal('unknown field: restId');
  });

  it("say each field's rule in words, naming the entry of an array", () => {
    expect(described(item('/body/inspectionDate', 'format', 'must match format "date"'))).to.equal(
      'inspectionDate must be a calendar date YYYY-MM-DD',
    );
    expect(described(item('/body/clientEmails/1', 'pattern'))).to.equal('clientEmails[1] must be an e-mail address');
    expect(described(item('/body/invoiceItems/0', 'pattern'))).to.equal(
      'invoiceItems[0] must have the shape "<Description>: $<Price>", for example "Radon test: $150.00"',
    );
    expect(described(item('/query/limit', 'maximum'))).to.equal('limit must be an integer from 1 to 100');
    expect(described(item('/body/url', 'x-eov-format'))).to.equal('url must be an absolute https:// URL');
  });

  it("fall back to the validator's words after the field's name", () => {
    expect(described(item('/body/notes', 'maxLength', 'must NOT have more than 100000 characters'))).to.equal(
      'notes must NOT have more than 100000 characters',
    );
    expect(described(item('/body/text/0/x', 'type', 'must be string'))).to.equal('text[0].x must be string');
  });

  it('prefer the most telling of several errors: a string-or-array field reports one per branch', () => {
    const names = [
      item('/body/clientNames', 'type', 'must be string'),
      item('/body/clientNames', 'pattern'),
      item('/body/clientNames', 'contains'),
      item('/body/clientNames', 'oneOf', 'must match exactly one schema in oneOf'),
    ];
    expect(described(...names)).to.equal('clientNames must contain at least one non-blank name');
    expect(
      described(
        item('/body/agentName', 'type', 'must be string'),
        item('/body/agentName', 'oneOf', 'must match exactly one schema in oneOf'),
      ),
    ).to.equal('agentName must be a string or an array of strings');
    expect(described(item('/body', 'type', 'must be object'))).to.equal('the body must be a JSON object');
  });

  it('name an unknown or empty query parameter', () => {
    expect(described(queryItem('foo', "Unknown query parameter 'foo'"))).to.equal('unknown query parameter: foo');
    expect(described(queryItem('restId', "Empty value found for query parameter 'restId'"))).to.equal(
      'restId must not be empty',
    );
    expect(described()).to.equal('invalid request');
  });

  it('always answer one sentence with 400, and a missing field first, whatever else is wrong', () => {
    const keyword = fc.constantFrom(
      'additionalProperties',
      'contains',
      'type',
      'pattern',
      'format',
      'maxLength',
      'minimum',
      'enum',
      'oneOf',
      'anyOf',
    );
    const field = fc.constantFrom('clientNames', 'inspectionDate', 'notes', 'limit', 'clientEmails', 'x');
    const anyItem = fc
      .tuple(fc.constantFrom('/body', '/query'), field, fc.option(fc.nat(9)), keyword, fc.string())
      .map(([at, name, index, kw, message]) => item(`${at}/${name}${index === null ? '' : `/${index}`}`, kw, message));
    fc.assert(
      fc.property(fc.array(anyItem, { maxLength: 6 }), field, fc.nat(6), (items, missing, at) => {
        const message = described(...items);
        expect(message).to.be.a('string').and.not.equal('');
        const withRequired = [...items];
        withRequired.splice(at, 0, item(`/body/${missing}`, 'required'));
        expect(described(...withRequired)).to.equal(`${missing} is required`);
      }),
    );
  });
});
