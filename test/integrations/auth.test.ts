import { expect } from 'chai';
import { api, newCompany } from '../support/harness.js';

describe('GET /auth', () => {
  it('answers {"result": "ok"} for a valid key', async () => {
    const { key } = await newCompany();
    const res = await api().get('/auth').set('X-API-KEY', key).expect(200);
    expect(res.body).to.deep.equal({ result: 'ok' });
  });

  it('answers 400 naming the missing header when X-API-KEY is absent', async () => {
    const res = await api().get('/auth').expect(400);
    expect(res.body).to.deep.equal({ error: 'missing X-API-KEY header' });
  });

  it('answers 400 "invalid API key" for an unknown key', async () => {
    const res = await api().get('/auth').set('X-API-KEY', 'irk_not-a-real-key').expect(400);
    expect(res.body).to.deep.equal({ error: 'invalid API key' });
  });

  it('answers 400 for a blank or absurdly long key without touching the data', async () => {
    await api().get('/auth').set('X-API-KEY', '   ').expect(400, { error: 'missing X-API-KEY header' });
    await api().get('/auth').set('X-API-KEY', 'k'.repeat(5000)).expect(400, { error: 'invalid API key' });
  });

  it('checks the key before the body, so an unauthenticated caller learns nothing about validation', async () => {
    const res = await api().post('/reports/new').set('Content-Type', 'application/json').send('{bad').expect(400);
    expect(res.body).to.deep.equal({ error: 'missing X-API-KEY header' });
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const { key } = await newCompany();
    const res = await api().post('/auth').set('X-API-KEY', key).expect(405);
    expect(res.headers.allow).to.equal('GET, HEAD');
    expect(res.body.error).to.equal('method POST is not allowed on /auth');
  });

  it('answers 404 {"error"} for an unknown route', async () => {
    const res = await api().get('/nope').expect(404);
    expect(res.body).to.deep.equal({ error: 'no route GET /nope' });
  });
});
