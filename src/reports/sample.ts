import type { Report } from '../api-types.js';
import { ALL_FIELDS, SAMPLE_REPORT_ID } from './fields.js';
import { reportOf } from './output.js';

export { SAMPLE_REPORT_ID };

/** A published report with every field filled, as a real publish would send it, dated `at` (from the field catalogue). */
export function sampleReport(at: Date): Report {
  return reportOf(ALL_FIELDS.map(([, field]) => field.sample(at)));
}
