import type { components, operations } from '../generated/api.js';

export type ReportInput = components['schemas']['ReportInput'];
export type Report = components['schemas']['Report'];
export type CreateResult = components['schemas']['CreateResult'];
export type ErrorBody = components['schemas']['ErrorResponse'];
export type ListReportsQuery = NonNullable<operations['listReports']['parameters']['query']>;
