import type { Report } from '../api-types.js';
import { ALL_FIELDS } from './fields.js';

/**
 * Every output field of a report, in order, as JSON: a report is parsed from it, its values then set
 * (reportOf), so that every report has this one shape with all 21 properties inside the object (JSON.parse
 * sizes an object for its properties; a copy of an object, or properties added one by one, keep most of
 * them in a separate store). The response validator reads every property of every report of an answer,
 * each time the cache sends it: made as Object.assign({}, ...outputs), reports would cost that validation
 * several times as much, and fewer cached pages would be sent a second (`npm run bench` measures the reads).
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
