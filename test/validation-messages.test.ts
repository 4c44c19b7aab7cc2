import { expect } from 'chai';
import { describeValidationErrors } from '../src/validation-messages.js';

describe('validation messages (pure)', () => {
  it('names a missing field before any other error', () => {
    const message = describeValidationErrors([
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
      describeValidationErrors([
        { path: '/body/clientEmails/1', message: 'must match pattern', errorCode: 'pattern.openapi.validation' },
      ]),
    ).to.equal('clientEmails[1] must be an e-mail address');
    expect(
      describeValidationErrors([
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
      describeValidationErrors([
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
    expect(
      describeValidationErrors([{ path: '/query/verbose', message: "Unknown query parameter 'verbose'" }]),
    ).to.equal('unknown query parameter: verbose');
    expect(
      describeValidationErrors([{ path: '/query/restId', message: "Empty value found for query parameter 'restId'" }]),
    ).to.equal('restId must not be empty');
    expect(
      describeValidationErrors([{ path: '/body', message: 'must be object', errorCode: 'type.openapi.validation' }]),
    ).to.equal('the body must be a JSON object');
    expect(describeValidationErrors([])).to.equal('invalid request');
  });
});
