import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { bodyValidator } from '../../src/platform/http/body-validator.js';
import { jsonBody } from '../../src/platform/http/json-body.js';
import { openApiValidator } from '../../src/platform/http/openapi-validator.js';
import { toHttpError } from '../../src/platform/http/error-handler.js';
import { describeValidationErrors } from '../../src/platform/http/validation-messages.js';

/** The validator's handlers as the app mounts them, and the same handlers as the check of a body made here. */
function validated() {
  const app = express();
  const handlers = openApiValidator({ validateResponses: false });
  let refused: unknown;
  app.use(jsonBody(), handlers, (_req: express.Request, res: express.Response) => res.json({}));
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    refused = err;
    res.status(400).end();
  });
  return { app, validator: bodyValidator(app, handlers), refusal: () => refused };
}

describe('bodyValidator', () => {
  it('passes the example body of the operation that takes the schema', async () => {
    const { validator } = validated();
    expect(await validator.check('UserInput', validator.example('UserInput'))).to.equal(undefined);
    expect(await validator.check('CompanyInput', { name: 'Acme' })).to.equal(undefined);
  });

  it("returns the items of the validator's 400 for that body sent to the operation, read as the API's message", async () => {
    const { app, validator, refusal } = validated();
    const body = { name: 'Lee', email: 'x' };
    const items = await validator.check('UserInput', body);
    await request(app).post(`/internal/companies/${randomUUID()}/users`).send(body).expect(400);
    expect(items).to.deep.equal((refusal() as { errors: unknown }).errors);
    expect(items?.map((i) => i.path)).to.deep.equal(['/body/email']);
    expect(toHttpError(refusal()).message).to.equal(describeValidationErrors(items!));
  });

  it('leaves the body it was given as it was (the validator fills defaults in its own copy)', async () => {
    const { validator } = validated();
    const body = {};
    await validator.check('ApiKeyInput', body);
    expect(body).to.deep.equal({});
  });

  it('throws for a schema no operation takes', async () => {
    const { validator } = validated();
    expect(() => validator.check('NoSuchInput', {})).to.throw(/no operation of openapi.yaml takes a NoSuchInput body/);
  });
});
