import { ALL_FIELDS, type SqlType } from './fields.js';

/**
 * display_bytes, derived from the field catalogue: about how many bytes a report takes in a response's
 * JSON, kept on its row so that a list page ends within its byte budget by a running sum (read.ts).
 * A BEFORE trigger computes it, not a generated column, whose expression PostgreSQL would rebuild for
 * every statement that writes reports.
 */

/** Bytes of a report's JSON no field's term counts: the field names, the id, the dates and the status. */
const DISPLAY_BYTES_BASE = 450;

/** The sum of every field's term: what a report takes in a response's JSON, about (SQL over its columns). */
export function displayBytesSql(): string {
  const terms = ALL_FIELDS.flatMap(([, field]) => (field.displayBytes ? [field.displayBytes] : []));
  return [String(DISPLAY_BYTES_BASE), ...terms].join('\n    + ');
}

/** The columns the terms are over (those of every field with a term), with their SQL types. */
function displayBytesColumns(): [string, SqlType][] {
  return ALL_FIELDS.flatMap(([, field]) => (field.displayBytes ? Object.entries(field.columns) : []));
}

/** report_display_bytes(<the columns>): the terms' sum, a function of the columns it is named after. */
export function displayBytesFunctionSql(): string {
  return `CREATE FUNCTION report_display_bytes(${displayBytesColumns()
    .map(([column, type]) => `${column} ${type}`)
    .join(', ')}) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN ${displayBytesSql()};`;
}

/** The body of the trigger function set_report_display_bytes(). */
export function displayBytesTriggerBody(): string {
  const args = displayBytesColumns().map(([column]) => `NEW.${column}`);
  return `
BEGIN
  NEW.display_bytes := report_display_bytes(${args.join(', ')});
  RETURN NEW;
END
`;
}
