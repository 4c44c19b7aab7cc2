import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { ALL_FIELDS, INPUT_FIELDS } from '../../src/reports/fields.js';
import { sampleReport } from '../../src/reports/sample.js';

/** The field catalogue against openapi.yaml: a field added to one and not the other fails here. */

interface Schema {
  properties: Record<string, unknown>;
  required?: string[];
}
const schemas = (parse(readFileSync('openapi.yaml', 'utf8')) as { components: { schemas: Record<string, Schema> } })
  .components.schemas;

describe('the field catalogue (reports/fields.ts) and openapi.yaml', () => {
  it('has a row for each field of ReportInput, and none it lacks', () => {
    expect(INPUT_FIELDS.map(([name]) => name)).to.have.members(Object.keys(schemas.ReportInput!.properties));
  });

  it('shows exactly the fields of Report, each from one row', () => {
    const at = new Date('2026-03-14T10:00:00.000Z');
    const shown = ALL_FIELDS.flatMap(([, field]) => Object.keys(field.sample(at)));
    expect(shown).to.have.members(Object.keys(schemas.Report!.properties));
    expect(new Set(shown).size).to.equal(shown.length);
    expect(Object.keys(sampleReport(at))).to.deep.equal(shown);
  });

  it('makes each output field from the columns its own row declares or reads', () => {
    for (const [name, field] of ALL_FIELDS) {
      const columns = Object.keys({ ...field.columns, ...field.read });
      // A row of empty values for its own columns only: output() must need nothing else.
      const row = Object.fromEntries(columns.map((c) => [c, field.columns[c]?.endsWith('[]') ? [] : '']));
      const system = { id: 'id', status: 'new' } as Record<string, unknown>;
      const shown = Object.keys(field.output({ ...row, ...(name in system ? { [name]: system[name] } : {}) }));
      expect(shown, name).to.deep.equal(Object.keys(field.sample(new Date())));
    }
  });
});
