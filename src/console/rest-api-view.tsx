import type {
  ApiKeySummary,
  AuditEvent,
  Company,
  CreatedKey,
  EventType,
  IntegrationView,
  WebhookDelivery,
} from '../api-types.js';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../integrations/index.js';
import { CsrfField, FormError } from './form.js';
import { TableScroll } from './layout.js';
import type { FieldErrors } from './schema-check.js';
import { Time } from './time.js';
import { RevokedKeys } from './revoked-keys.js';

/** The attempts the page lists: the API's largest page (the delivery log has no cursor to page on). */
export const DELIVERIES_SHOWN = 100;
/** The latest revoked keys the page lists. */
export const REVOKED_KEYS_SHOWN = 20;
/** A receiver's answer is untrusted text: the list shows only its start, the test's outcome all the log keeps. */
export const EXCERPT_SHOWN = 200;

export type World = 'live' | 'sandbox';
/** How the application API names each world in its refusals ("the sandbox has no webhook address"). */
export const WHOSE: Record<World, string> = { live: 'the company', sandbox: 'the sandbox' };
export const HEADINGS: Record<World, string> = { live: 'Live webhook', sandbox: 'Sandbox webhook' };
/** Each world's webhook in a sentence ("The live webhook address was saved."). */
export const WEBHOOK_NAMES: Record<World, string> = { live: 'live webhook', sandbox: 'sandbox webhook' };

/** What one webhook section shows besides its settings: a refusal, a revealed secret, a test's outcome. */
export interface WebhookState {
  values?: Record<string, string>;
  /** The event types a refused form chose, to show them again. */
  eventTypes?: string[];
  errors?: FieldErrors;
  secret?: string;
  test?: { ok: boolean; status: number; message: string; delivery?: WebhookDelivery };
}

export interface PageState {
  newKey?: CreatedKey;
  keyErrors?: FieldErrors;
  webhook?: Partial<Record<World, WebhookState>>;
  deliveryErrors?: FieldErrors;
  values?: Record<string, string>;
  /** Which page of the recent deliveries: after (`older`) or before (`newer`) one of them. */
  deliveriesAt?: { older?: string; newer?: string };
}

export interface PageProps extends PageState {
  company: Company;
  live: IntegrationView;
  sandbox?: IntegrationView;
  deliveries: WebhookDelivery[];
  /** Whether older (newer) deliveries lie beyond this page. */
  older: boolean;
  newer: boolean;
  /** The latest key revocations of the audit trail: who revoked which key, when. */
  revokedKeys: AuditEvent[];
}

/**
 * A `datetime-local` field's value ("2026-03-14T09:30") read as UTC, as RecoverInput's date-time needs
 * a zone; anything else goes to the schema check as typed, to be refused in the API's words.
 */
export const sinceOf = (since: unknown) =>
  typeof since === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(since)
    ? `${since.length === 16 ? `${since}:00` : since}Z`
    : since;

/** A query's value when it is one text. */
export const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

export const base = (companyId: string) => `/console/companies/${companyId}/integrations/rest-api`;

export const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

export function Breadcrumb({ company }: { company: Company }) {
  return (
    <nav aria-label="Breadcrumb">
      <ol class="breadcrumb">
        <li>
          <a href={`/console/companies/${company.id}`}>{company.name}</a>
        </li>
        <li>Settings</li>
        <li>Integrations</li>
        <li aria-current="page">REST API</li>
      </ol>
    </nav>
  );
}

export function KeysSection({ company, live, newKey, keyErrors, revokedKeys }: PageProps) {
  const path = base(company.id);
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      {newKey && (
        <div class="new-key">
          <p>
            Your new {newKey.mode === 'test' ? 'test (sandbox)' : 'live'} key. Copy it now: it is shown only this once.
          </p>
          <p>
            <code id="new-key">{newKey.key}</code>{' '}
            <button type="button" data-copy="new-key">
              Copy
            </button>
          </p>
        </div>
      )}
      <form method="post" action={`${path}/api-keys`}>
        <CsrfField />
        <FormError errors={keyErrors} />
        <fieldset aria-describedby={keyErrors?.mode ? 'key-mode-error' : undefined}>
          <legend>Mode</legend>
          <label>
            <input type="radio" name="mode" value="live" checked /> Live
          </label>
          <label>
            <input type="radio" name="mode" value="test" /> Test (sandbox)
          </label>
          {keyErrors?.mode && (
            <p id="key-mode-error" class="field-error">
              {keyErrors.mode}
            </p>
          )}
        </fieldset>
        <button type="submit">Generate API Key</button>
      </form>
      {live.keys.length === 0 ? <p>No API keys.</p> : <KeyTable companyId={company.id} keys={live.keys} />}
      {revokedKeys.length > 0 && <RevokedKeys entries={revokedKeys} />}
    </section>
  );
}

function KeyTable({ companyId, keys }: { companyId: string; keys: ApiKeySummary[] }) {
  const caption = 'The company’s keys, newest first';
  return (
    <TableScroll label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Prefix</th>
            <th scope="col">Mode</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>{key.mode}</td>
              <td>
                <Time at={key.createdAt} />
              </td>
              <td>{key.lastUsedAt ? <Time at={key.lastUsedAt} /> : 'never'}</td>
              <td>
                <a href={`${base(companyId)}/api-keys/${key.id}/revoke`} aria-label={`Revoke key ${key.prefix}…`}>
                  Revoke
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** The event types a webhook receives: one checkbox each, named as the catalogue names them. */
export function EventTypesField({ form, chosen, error }: { form: string; chosen: readonly string[]; error?: string }) {
  const errorId = `${form}-eventTypes-error`;
  return (
    <fieldset class="choices" aria-describedby={error ? errorId : undefined}>
      <legend>Event types sent</legend>
      {EVENT_TYPE_NAMES.map((type: EventType) => (
        <label key={type}>
          <input type="checkbox" name="eventTypes" value={type} checked={chosen.includes(type)} /> <code>{type}</code>:{' '}
          {EVENT_TYPES[type].label}
        </label>
      ))}
      {error && (
        <p id={errorId} class="field-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

export function TestOutcome({ test }: { test: NonNullable<WebhookState['test']> }) {
  const { delivery } = test;
  return (
    <div class={test.ok ? 'outcome' : 'outcome failed'}>
      <p>
        {test.ok ? 'Test delivery sent' : 'Test delivery failed'} (status {test.status}): {test.message}
      </p>
      {delivery && <AttemptAnswer attempt={delivery} />}
    </div>
  );
}

/** What the receiver answered an attempt (untrusted text, as much as the delivery log keeps of it). */
export function AttemptAnswer({ attempt }: { attempt: WebhookDelivery }) {
  return (
    <dl>
      <dt>Time</dt>
      <dd>
        <Time at={attempt.attemptedAt} />
      </dd>
      <dt>Receiver’s status</dt>
      <dd>{attempt.httpStatus ?? 'none'}</dd>
      <dt>Receiver’s answer</dt>
      <dd>
        <pre>{attempt.responseExcerpt}</pre>
      </dd>
    </dl>
  );
}
