// SQL that formats a timestamptz as the API shows timestamps: ISO 8601 in UTC with milliseconds.

export const isoTimestamp = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
