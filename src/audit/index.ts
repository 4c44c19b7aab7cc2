/** The audit component: the trail of who did what in a company, as the other components and the app use it. */
export { AUDIT_ACTIONS, listAudit, recordAudit, sweepAudit, type Actor, type AuditAction, type Doer } from './audit.js';
export { auditRouter } from './routes.js';
