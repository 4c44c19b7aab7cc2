import type { Report } from '../api-types.js';
import { ALL_FIELDS } from './fields.js';

/**
 * Every output field of a report, in order, as JSON: each report is parsed from it and then filled in
 * (reportOf), so that all reports share one shape with their properties inside the object (JSON.parse
 * sizes an object for them), which keeps the response validator's reads of every property cheap.
 */
const OUTPUT_SHAPE = JSON.stringify(
  Object.fromEntries(
    ALL_FIELDS.flatMap(([, field]) => Object.keys(field.sample(new Date(0))).map((name) => [name, null])),
  ),
);

/** A report made of its fields' outputs (or samples), in the shape of OUTPUT_SHAPE. */
export function reportOf(parts: Partial<Report>[]): Report {
  const report = JSON.parse(OUTPUT_SHAPE) as Record<string, unknown>;
  for (const part of parts) Object.assign(report, part);
  return report as Report;
}
