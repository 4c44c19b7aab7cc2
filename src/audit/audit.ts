import type { AuditAction, AuditEvent } from '../api-types.js';
import pg, { type PoolClient } from 'pg';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { isoTimestamp } from '../db/iso-timestamp.js';

/**
 * The audit trail's catalogue: every action it records, and how the console names it; exactly the names
 * of openapi.yaml's AuditAction (the type checker holds the two together).
 */
export const AUDIT_ACTIONS = {
  'key.generated': 'API key generated',
  'key.revoked': 'API key revoked',
  'webhook.saved': 'Webhook address saved',
  'webhook.secret_revealed': 'Signing secret revealed',
  'webhook.secret_rotated': 'Signing secret rotated',
  'webhook.test_sent': 'Test delivery sent',
  'event.redelivered': 'Event redelivered',
  'events.recovered': 'Failed events recovered',
  'integration.revoked': 'REST API integration revoked',
  'report.started': 'Report started',
  'report.published': 'Report published',
  'user.invited': 'Person invited',
  'user.invitation_revoked': 'Invitation revoked',
  'user.role_changed': 'Role changed',
  'user.removed': 'Person removed',
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Sign-in failed',
} as const satisfies Record<AuditAction, string>;

export type { AuditAction };

/** Who acts: one of the company's people (by e-mail), the operator (the application token), or a partner's key. */
export type Actor = { type: 'person'; email: string } | { type: 'operator' } | { type: 'key'; prefix: string };

/**
 * Who acts, from which client address (the request's, as TRUST_PROXY has it), and whose trail records it:
 * the company's own, for what is done in its sandbox too.
 */
export interface Doer {
  actor: Actor;
  clientAddress: string;
  companyId: string;
}

/** One entry's what: the action, what it was done to, its particulars. */
export interface AuditEntry {
  action: AuditAction;
  subject?: string;
  details?: Record<string, string>;
}

const actorName = (actor: Actor): string =>
  actor.type === 'person' ? actor.email : actor.type === 'key' ? actor.prefix : 'operator';

/**
 * Appends one entry to the doer's company's trail. Call it in the transaction of the change it records,
 * so that the entry and the change are written together or not at all.
 */
export const recordAudit = (db: Queryable, by: Doer, entry: AuditEntry) => recordAudits(db, by, [entry]);

/**
 * Appends entries to the doer's company's trail in their order, in one statement however many there are
 * (a revoked integration's keys); as recordAudit, in the transaction of the change they record.
 */
export async function recordAudits(db: Queryable, by: Doer, entries: readonly AuditEntry[]): Promise<void> {
  await db.query(
    `INSERT INTO audit_events (company_id, actor_type, actor, action, subject, details, client_address)
     SELECT $1, $2, $3, e.action, e.subject, e.details, $7
       FROM unnest($4::text[], $5::text[], $6::jsonb[]) WITH ORDINALITY AS e(action, subject, details, n)
      ORDER BY e.n`,
    [
      by.companyId,
      by.actor.type,
      actorName(by.actor),
      entries.map((entry) => entry.action),
      entries.map((entry) => entry.subject ?? ''),
      entries.map((entry) => JSON.stringify(entry.details ?? {})),
      by.clientAddress,
    ],
  );
}

/**
 * Makes a change and records it in one transaction: both are written, or neither. Given a pool, in a
 * transaction of its own; given a client, in the transaction the caller holds on it.
 */
export function withAudit<T>(
  db: Pool | PoolClient,
  by: Doer,
  change: (db: Queryable) => Promise<T>,
  entry: (result: T) => AuditEntry,
): Promise<T> {
  const audited = async (tx: Queryable) => {
    const result = await change(tx);
    await recordAudit(tx, by, entry(result));
    return result;
  };
  return db instanceof pg.Pool ? withTransaction(db, audited) : audited(db);
}

export interface AuditQuery {
  limit: number;
  /** The id of an entry: only older ones. */
  before?: string;
  /** A person's e-mail, `operator`, or a key's prefix. */
  actor?: string;
  action?: AuditAction;
}

/** A page of the company's trail, newest first, and whether older entries follow. */
export async function listAudit(
  db: Queryable,
  companyId: string,
  { limit, before, actor, action }: AuditQuery,
): Promise<{ entries: AuditEvent[]; more: boolean }> {
  const { rows } = await db.query<AuditEvent>(
    `SELECT id::text, ${isoTimestamp('at')} AS at, json_build_object('type', actor_type, 'name', actor) AS actor,
            action, subject, details, client_address AS "clientAddress"
       FROM audit_events
      WHERE company_id = $1 AND ($2::bigint IS NULL OR id < $2) AND ($3::text IS NULL OR actor = $3)
        AND ($4::text IS NULL OR action = $4)
      -- By the table's id (a number), not its text in the response.
      ORDER BY audit_events.id DESC LIMIT $5`,
    [companyId, before ?? null, actor ?? null, action ?? null, limit + 1],
  );
  return { entries: rows.slice(0, limit), more: rows.length > limit };
}

/** Forgets entries older than `retentionMs`, a bounded number at a time: the only way an entry goes. */
export async function sweepAudit(db: Queryable, retentionMs: number, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM audit_events WHERE ctid IN (
       SELECT ctid FROM audit_events WHERE at < now() - $1 * interval '1 millisecond' LIMIT $2)`,
    [retentionMs, limit],
  );
  return rowCount ?? 0;
}
