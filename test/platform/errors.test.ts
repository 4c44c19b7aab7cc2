import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import express from 'express';
import request, { type Response } from 'supertest';
import { parse } from 'yaml';
import { createApp } from '../../src/app.js';
import type { Pool } from '../../src/db/pool.js';
import { newKey } from '../../src/integrations/keys/api-keys.js';
import { refuse } from '../../src/core/errors.js';
import { ERROR_WORDING } from '../../src/error-wording.js';
import { ERROR_MAX_LENGTH as ERROR_MAX_LENGTH_IN_CODE, errorHandler } from '../../src/platform/http/error-handler.js';
import { headAsGet } from '../../src/platform/http/head-as-get.js';
import { QUOTED_MAX_LENGTH } from '../../src/core/quoted.js';
import { openApiValidator, SPEC_PATH } from '../../src/platform/http/openapi-validator.js';
import { requestLogger } from '../../src/platform/observability/request-log.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { APP_TOKEN, api, appDeps, newCompany, reportInput } from '../support/harness.js';

/** An app whose database fails every query with the given error. */
function appWithFailingDatabase(error: Error & { code?: string }) {
  const db = {
    query: async () => {
      throw error;
    },
    connect: async () => {
      throw error;
    },
  } as unknown as Pool;
  return createApp(appDeps(db));
}

/** A key of the issued shape, so that its check reaches the (failing) database. */
const unknownKey = newKey().key;

describe('errors', () => {
  it('answers 500 {"error": "internal server error"} without stack, SQL or details of the failure', async () => {
    const failure = new Error('relation "api_keys" does not exist: SELECT key_hash FROM api_keys');
    const res = await api(appWithFailingDatabase(failure)).get('/auth').set('X-API-KEY', unknownKey).expect(500);
    expect(res.body).to.deep.equal({ error: 'internal server error' });
    expect(res.text).to.not.match(/api_keys|SELECT|at /);
  });

  it('answers 503 {"error": "database unavailable"} when the database cannot be reached', async () => {
    const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const res = await api(appWithFailingDatabase(failure)).get('/auth').set('X-API-KEY', unknownKey).expect(503);
    expect(res.body).to.deep.equal({ error: 'database unavailable' });
  });

  it('answers 405 with Allow for a method a partner path lacks', async () => {
    const { key } = await newCompany();
    for (const [method, path, allow] of [
      ['delete', '/reports', 'GET, HEAD'],
      ['put', '/reports/new', 'POST'],
    ] as const) {
      const res = await api()[method](path).set('X-API-KEY', key).expect(405);
      expect(res.headers.allow).to.equal(allow);
      expect(res.body).to.deep.equal({ error: `method ${method.toUpperCase()} is not allowed on ${path}` });
    }
  });
});

/** openapi.yaml's bound on ErrorResponse.error. */
const ERROR_MAX_LENGTH = (
  parse(readFileSync(SPEC_PATH, 'utf8')) as {
    components: { schemas: { ErrorResponse: { properties: { error: { maxLength: number } } } } };
  }
).components.schemas.ErrorResponse.properties.error.maxLength;

/**
 * The error of an answer that echoed long input: JSON, within openapi.yaml's bound, and the input quoted
 * by its start with the cut marked; far shorter than the bound, so the quote, not the last-resort cut, did it.
 */
function quotedError(res: Response, shape: RegExp): string {
  expect(res.headers['content-type']).to.match(/^application\/json/);
  const message = (res.body as { error: string }).error;
  expect(message.length).to.be.at.most(ERROR_MAX_LENGTH);
  expect(message.length, message).to.be.below(QUOTED_MAX_LENGTH + 50);
  expect(message).to.match(shape);
  return message;
}

describe('errors: caller input is quoted bounded', () => {
  const auth = { Authorization: `Bearer ${APP_TOKEN}` };
  const long = (c: string, n = 2000) => c.repeat(n);

  it('answers 404 JSON for a report id of 2,000 characters', async () => {
    const { key } = await newCompany();
    const res = await api()
      .get(`/reports/${long('a')}`)
      .set('X-API-KEY', key)
      .expect(404);
    quotedError(res, /^report a+… not found$/);
  });

  it('answers 404 JSON for long company, key and report ids of the internal paths', async () => {
    const { companyId } = await newCompany();
    quotedError(
      await api()
        .get(`/internal/companies/${long('c')}/api-keys`)
        .set(auth)
        .expect(404),
      /^company c+… not found$/,
    );
    quotedError(
      await api()
        .post(`/internal/companies/${long('c')}/reports/${long('r')}/start`)
        .set(auth)
        .expect(404),
      /^company c+… not found$/,
    );
    quotedError(
      await api()
        .delete(`/internal/companies/${companyId}/api-keys/${long('k')}`)
        .set(auth)
        .expect(404),
      /^API key k+… not found$/,
    );
    quotedError(
      await api()
        .post(`/internal/companies/${companyId}/reports/${long('r')}/start`)
        .set(auth)
        .expect(404),
      /^report r+… not found$/,
    );
    quotedError(
      await api()
        .post(`/internal/companies/${companyId}/reports/${long('r')}/publish`)
        .set(auth)
        .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: false })
        .expect(404),
      /^report r+… not found$/,
    );
  });

  it('answers 404 JSON for an id that does not percent-decode, however long', async () => {
    const { key } = await newCompany();
    const res = await api()
      .get(`/reports/%FF${long('a')}`)
      .set('X-API-KEY', key)
      .expect(404);
    quotedError(res, /^report %FFa+… not found$/);
  });

  it('answers 404 JSON for a long unknown route, and 405 JSON for a method a long path lacks', async () => {
    const { key } = await newCompany();
    quotedError(
      await api()
        .get(`/${long('x', 5000)}`)
        .expect(404),
      /^no route GET \/x+…$/,
    );
    const res = await api()
      .delete(`/reports/${long('a')}`)
      .set('X-API-KEY', key)
      .expect(405);
    expect(res.headers.allow).to.equal('GET, HEAD');
    quotedError(res, /^method DELETE is not allowed on \/reports\/a+…$/);
  });

  it('answers 400 JSON for an unknown body field or query parameter with a name of 5,000 characters', async () => {
    const { key } = await newCompany();
    quotedError(
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ [long('f', 5000)]: 'x' }))
        .expect(400),
      /^unknown field: f+…$/,
    );
    quotedError(
      await api()
        .get(`/reports?${long('q', 5000)}=1`)
        .set('X-API-KEY', key)
        .expect(400),
      /^unknown query parameter: q+…$/,
    );
  });

  it('answers 400 JSON for unstorable text under a field or query parameter name of 5,000 characters', async () => {
    const { key } = await newCompany();
    quotedError(
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ [long('f', 5000)]: 'a\u0000b' }))
        .expect(400),
      /^f+… must not contain the NUL character/,
    );
    quotedError(
      await api()
        .get(`/reports?${long('q', 5000)}=%00`)
        .set('X-API-KEY', key)
        .expect(400),
      /^q+… must not contain the NUL character/,
    );
  });

  it('answers 400 JSON listing 50 unknown inspectors of 320 characters each, the list cut', async () => {
    const { key } = await newCompany();
    const addresses = Array.from(
      { length: 50 },
      (_, i) => `${String(i).padStart(2, '0')}${long('i', 306)}@example.com`,
    );
    const res = await api()
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ inspectorEmails: addresses }))
      .expect(400);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    const message = (res.body as { error: string }).error;
    expect(message.length, 'the list quoted, not only cut at the limit').to.be.below(1100);
    expect(message).to.match(/^inspectorEmails are not users of this company: 00i+@example\.com, 01i+.*…$/);
  });
});

describe('errors: the error path never fails', () => {
  const logger = createLogger('silent');

  /** The last-resort answer: the declared 500 body as JSON, never cached, with the request id, nothing of the failed error. */
  function expectLastResort(res: Response) {
    expect(res.status).to.equal(500);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.body).to.deep.equal({ error: 'internal server error' });
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.headers['x-request-id']).to.match(/./);
    expect(res.headers['retry-after']).to.equal(undefined);
  }

  it('answers the JSON 500 when sending the error body throws', async () => {
    const app = express();
    app.use(requestLogger(logger));
    app.get('/reports/:reportId', (_req, res) => {
      res.json = () => {
        throw new Error('the body was refused');
      };
      throw refuse.unavailable('database unavailable');
    });
    app.use(errorHandler(logger, ERROR_WORDING));
    expectLastResort(await request(app).get('/reports/x'));
  });

  it('answers the JSON 500 when the response validator refuses the error body', async () => {
    // A status the operation does not declare: the validator refuses the body whatever it says.
    const app = express();
    app.use(requestLogger(logger));
    app.use(headAsGet(openApiValidator({ validateResponses: true })));
    app.get('/reports/:reportId', () => {
      throw refuse.keptResponse(418, 'not declared');
    });
    app.use(errorHandler(logger, ERROR_WORDING));
    expectLastResort(await request(app).get('/reports/x').set('X-API-KEY', 'irk_x'));
  });

  it('cuts a message longer than openapi.yaml allows instead of failing', async () => {
    const app = express();
    app.use(requestLogger(logger));
    app.use(headAsGet(openApiValidator({ validateResponses: true })));
    app.get('/reports/:reportId', () => {
      throw refuse.notFound(`report ${'a'.repeat(5000)} not found`);
    });
    app.use(errorHandler(logger, ERROR_WORDING));
    const res = await request(app).get('/reports/x').set('X-API-KEY', 'irk_x').expect(404);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect((res.body as { error: string }).error)
      .to.have.length(ERROR_MAX_LENGTH)
      .and.match(/^report a+…$/);
  });

  it('cuts at the length openapi.yaml declares for error', () => {
    expect(ERROR_MAX_LENGTH_IN_CODE).to.equal(ERROR_MAX_LENGTH);
  });
});
