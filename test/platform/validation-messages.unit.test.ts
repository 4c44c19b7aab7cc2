import { expect } from 'chai';
import fc from 'fast-check';
import { describeValidationErrors, type ValidatorItem } from '../../src/platform/http/validation-messages.js';
import { ERROR_WORDING } from '../../src/error-wording.js';

/** The messages as the app words them (every component's field wording). */
const describe_ = (items: ValidatorItem[]) => describeValidationErrors(items, ERROR_WORDING.fields);

/** An item of express-openapi-validator's error list: where, its message, and the schema keyword. */
const item = (path: string, keyword: string, message = 'is invalid'): ValidatorItem => ({
  path,
  message,
  errorCode: `${keyword}.openapi.validation`,
});

describe('validation messages (pure)', () => {
  it('names a missing field before any other error', () => {
    const message = describe_([
      { path: '/body/agentEmail', message: 'must match pattern', errorCode: 'pattern.openapi.validation' },
      {
        path: '/body/clientNames',
        message: "must have required property 'clientNames'",
        errorCode: 'required.openapi.validation',
      },
    ]);
    expect(message).to.equal('clientNames is required');
  });

  it('labels array entries and nested fields, and says what an unknown field is', () => {
    expect(
      describe_([
        { path: '/body/clientEmails/1', message: 'must match pattern', errorCode: 'pattern.openapi.validation' },
      ]),
    ).to.equal('clientEmails[1] must be an e-mail address');
    expect(
      describe_([
        {
          path: '/body/inspectorEmail',
          message: 'must NOT have additional properties',
          errorCode: 'additionalProperties.openapi.validation',
        },
      ]),
    ).to.equal('unknown field: inspectorEmail');
  });

  it('reads the string-or-array alternatives as one rule', () => {
    expect(
      describe_([
        { path: '/body/clientPhones', message: 'must be string', errorCode: 'type.openapi.validation' },
        { path: '/body/clientPhones', message: 'must be array', errorCode: 'type.openapi.validation' },
        {
          path: '/body/clientPhones',
          message: 'must match exactly one schema in oneOf',
          errorCode: 'oneOf.openapi.validation',
        },
      ]),
    ).to.equal('clientPhones must be a string or an array of strings');
  });

  it('names unknown and empty query parameters, and a body that is no object', () => {
    expect(describe_([{ path: '/query/verbose', message: "Unknown query parameter 'verbose'" }])).to.equal(
      'unknown query parameter: verbose',
    );
    expect(describe_([{ path: '/query/restId', message: "Empty value found for query parameter 'restId'" }])).to.equal(
      'restId must not be empty',
    );
    expect(describe_([{ path: '/body', message: 'must be object', errorCode: 'type.openapi.validation' }])).to.equal(
      'the body must be a JSON object',
    );
    expect(describe_([])).to.equal('invalid request');
  });

  it("says each field's rule in words, and a property the operation does not take is unknown", () => {
    expect(describe_([item('/body/inspectionDate', 'format', 'must match format "date"')])).to.equal(
      'inspectionDate must be a calendar date YYYY-MM-DD',
    );
    expect(describe_([item('/body/invoiceItems/0', 'pattern')])).to.equal(
      'invoiceItems[0] must have the shape "<Description>: $<Price>", for example "Radon test: $150.00"',
    );
    expect(describe_([item('/query/limit', 'maximum')])).to.equal('limit must be an integer from 1 to 100');
    expect(describe_([item('/body/url', 'x-eov-format')])).to.equal('url must be an absolute https:// URL');
    expect(describe_([item('/body/restId', 'false schema')])).to.equal('unknown field: restId');
  });

  it("falls back to the validator's words after the field's label", () => {
    expect(describe_([item('/body/notes', 'maxLength', 'must NOT have more than 100000 characters')])).to.equal(
      'notes must NOT have more than 100000 characters',
    );
    expect(describe_([item('/body/text/0/x', 'type', 'must be string')])).to.equal('text[0].x must be string');
  });

  it('prefers the most telling of several errors: a failed contains over the pattern of each entry', () => {
    const names = [
      item('/body/clientNames', 'type', 'must be string'),
      item('/body/clientNames', 'pattern'),
      item('/body/clientNames', 'contains'),
      item('/body/clientNames', 'oneOf', 'must match exactly one schema in oneOf'),
    ];
    expect(describe_(names)).to.equal('clientNames must contain at least one non-blank name');
  });

  it('always gives one sentence, and a missing field first wherever it stands, whatever else is wrong', () => {
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
        expect(describe_(items)).to.be.a('string').and.not.equal('');
        const withRequired = [...items];
        withRequired.splice(at, 0, item(`/body/${missing}`, 'required'));
        expect(describe_(withRequired)).to.equal(`${missing} is required`);
      }),
    );
  });
});
