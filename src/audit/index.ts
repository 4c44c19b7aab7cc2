// The audit component's public surface: the trail of who did what in a company.

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
export { byKey, byOperator, modeActedIn } from './doers.js';
export { auditRouter } from './routes.js';
