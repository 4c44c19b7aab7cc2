import { expect } from 'chai';
import { partnerResponseKind } from '../../src/reports/response-kinds.js';

describe('partnerResponseKind', () => {
  it('names a list, a report, a create and anything else, each by its method', () => {
    expect(partnerResponseKind('GET', '/reports').kind).to.equal('GET list');
    expect(partnerResponseKind('HEAD', '/reports/3f1c').kind).to.equal('HEAD report');
    expect(partnerResponseKind('POST', '/reports/new').kind).to.equal('POST new');
    expect(partnerResponseKind('PATCH', '/reports/3f1c').kind).to.equal('PATCH report');
    expect(partnerResponseKind('GET', '/sandbox/reports/3f1c').kind).to.equal('GET other');
    expect(partnerResponseKind('GET', '/events').kind).to.equal('GET other');
  });

  it('counts only a read of a list or a report as large until one is seen', () => {
    const large = (method: string, path: string) => partnerResponseKind(method, path).large;
    expect(large('GET', '/reports')).to.equal(true);
    expect(large('HEAD', '/reports')).to.equal(true);
    expect(large('GET', '/reports/3f1c')).to.equal(true);
    expect(large('GET', '/reports/new')).to.equal(false);
    expect(large('POST', '/reports/new')).to.equal(false);
    expect(large('PATCH', '/reports/3f1c')).to.equal(false);
    expect(large('GET', '/auth')).to.equal(false);
    expect(large('GET', '/sandbox/reports/3f1c')).to.equal(false);
    expect(large('GET', '/events')).to.equal(false);
  });
});
