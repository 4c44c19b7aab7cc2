// The reports component's public surface, for the app and the other components.

export { applicationReportsRouter } from './application-routes.js';
export { databaseReports, ReportCache, type ReportReads } from './cache.js';
export { reportsRouter, writesCheckTheirKey } from './partner-routes.js';
export { findForCompany, listForCompany } from './read.js';
export { cursorParam, encodeCursor, type ListCursor } from './cursor.js';
export { SAMPLE_REPORT_ID, sampleReport } from './sample.js';
export { REPORT_FIELD_WORDING, beingPublished, reportNotFound } from './report-error-wording.js';
export { cameThroughApi } from './fields.js';
export { ReportWriter } from './write.js';
export { partnerResponseKind } from './response-kinds.js';
export { wipeSandbox } from './sandbox.js';
export { sweepEvery } from './sweeps.js';
export {
  claimForDelivery,
  lockForPublish,
  markPublished,
  publishStateOf,
  releaseClaim,
  markStarted,
  type PublishClaim,
  type PublishPrecondition,
  type PublishState,
  type Started,
} from './status.js';
// The field catalogue, for the generator (scripts/generate.ts) and the benchmark's yardstick (scripts/bench/straightforward/).
export { ALL_FIELDS, INPUT_FIELDS, type Origin, type ReportRow } from './fields.js';
export { displayBytesFunctionSql, displayBytesTriggerBody } from './display-bytes.js';
export { parseInvoiceItem, toList } from './field-values.js';
