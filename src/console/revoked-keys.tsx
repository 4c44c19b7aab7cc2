import type { AuditEvent } from '../api-types.js';
import { TableScroll } from './layout.js';
import { Time } from './time.js';

/**
 * Revoked keys stay listed, from the audit trail: which, when, by whom; the latest here, every one in the
 * trail filtered to revocations (`trail`), which pages through them.
 */
export function RevokedKeys({ entries, more, trail }: { entries: AuditEvent[]; more: boolean; trail: string }) {
  return (
    <>
      <TableScroll label="Revoked keys">
        <table>
          <caption>Revoked keys, latest first</caption>
          <thead>
            <tr>
              <th scope="col">Prefix</th>
              <th scope="col">Mode</th>
              <th scope="col">Revoked</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <code>{entry.subject}…</code>
                </td>
                <td>{entry.details.mode}</td>
                <td>
                  <Time at={entry.at} />
                  {entry.details.with ? ` (with ${entry.details.with})` : ''}
                </td>
                <td>{entry.actor.name}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {more ? (
        <p>
          Older revocations than these: <a href={trail}>every revoked key in the audit trail</a>.
        </p>
      ) : (
        <p>Every revoked key is listed.</p>
      )}
    </>
  );
}
