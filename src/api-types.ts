import type { components, operations } from '../generated/api.js';

/** Every shape the code uses, as openapi.yaml declares it: aliases of the generated types, nothing else. */
type Schemas = components['schemas'];

export type ErrorBody = Schemas['ErrorResponse'];
export type Ok = Schemas['Ok'];
export type OperationalStatus = Schemas['OperationalStatus'];

export type ReportInput = Schemas['ReportInput'];
export type ApplicationReportInput = Schemas['ApplicationReportInput'];
export type Report = Schemas['Report'];
export type CreateResult = Schemas['CreateResult'];
export type ListReportsQuery = NonNullable<operations['listReports']['parameters']['query']>;
export type ListApplicationReportsQuery = NonNullable<operations['listApplicationReports']['parameters']['query']>;

export type CompanyInput = Schemas['CompanyInput'];
export type Company = Schemas['Company'];
export type UserInput = Schemas['UserInput'];
export type User = Schemas['User'];
export type ApiKeySummary = Schemas['ApiKey'];
export type CreatedKey = Schemas['CreatedApiKey'];

export type WebhookInput = Schemas['WebhookInput'];
export type WebhookSettings = Schemas['WebhookSettings'];
export type IntegrationView = Schemas['Integration'];
export type SecretRotationInput = Schemas['SecretRotationInput'];
export type SecretRotation = Schemas['SecretRotation'];
export type WebhookTestResult = Schemas['WebhookTestResult'];
export type PublishInput = Schemas['PublishInput'];
export type PublishResult = Schemas['PublishResult'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WhenDeliveryFails = Schemas['WhenDeliveryFails'];
export type Event = Schemas['Event'];
export type AuditEvent = Schemas['AuditEvent'];
export type AuditAction = Schemas['AuditAction'];
export type ListAuditEventsQuery = NonNullable<operations['listAuditEvents']['parameters']['query']>;
export type EventType = Schemas['EventType'];
export type RecoverInput = Schemas['RecoverInput'];
export type RecoverResult = Schemas['RecoverResult'];
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
export type SandboxPublishInput = Schemas['SandboxPublishInput'];
