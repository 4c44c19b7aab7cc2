/** The audit component: the trail of who did what in a company, as the other components and the app use it. */
export {
  AUDIT_ACTIONS,
  listAudit,
  recordAudit,
  recordAudits,
  sweepAudit,
  withAudit,
  type Actor,
  type AuditAction,
  type AuditEntry,
  type Doer,
} from './audit.js';
export { byKey, byOperator, worldOf } from './doers.js';
export { auditRouter } from './routes.js';
