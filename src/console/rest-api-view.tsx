import type { Response } from 'express';
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
import type { Page, PageAt } from '../db/keyset.js';
import type { FieldErrors } from './schema-check.js';
import { Time } from './time.js';

/** The attempts a page lists: the API's largest page. */
export const DELIVERIES_SHOWN = 100;
/** The latest revoked keys the page lists. */
export const REVOKED_KEYS_SHOWN = 20;
/** A receiver's response is untrusted text: the list shows only its start, the test's outcome all the log keeps. */
export const EXCERPT_SHOWN = 200;

export type WebhookMode = 'live' | 'sandbox';
/** How the application API names each webhook's owner in its refusals ("the sandbox has no webhook address"). */
export const WHOSE: Record<WebhookMode, string> = { live: 'the company', sandbox: 'the sandbox' };
export const HEADINGS: Record<WebhookMode, string> = { live: 'Live webhook', sandbox: 'Sandbox webhook' };
/** Each webhook's name in a sentence ("The live webhook address was saved."). */
export const WEBHOOK_NAMES: Record<WebhookMode, string> = { live: 'live webhook', sandbox: 'sandbox webhook' };

/** What one webhook section shows besides its settings: a refusal, a revealed secret, a test's outcome. */
export interface WebhookState {
  values?: Record<string, string>;
  /** The event types a refused form chose, to show them again. */
  eventTypes?: string[];
  errors?: FieldErrors;
  secret?: string;
  test?: { ok: boolean; status: number; message: string; delivery?: WebhookDelivery };
}

/** An integration's settings: its keys are listed a page at a time, apart. */
export type Settings = Omit<IntegrationView, 'keys'>;

export interface PageState {
  newKey?: CreatedKey;
  keyErrors?: FieldErrors;
  webhook?: Partial<Record<WebhookMode, WebhookState>>;
  deliveryErrors?: FieldErrors;
  values?: Record<string, string>;
  /** Which page of the recent deliveries: after (`older`) or before (`newer`) one of them. */
  deliveriesAt?: { older?: string; newer?: string };
  /** Which page of the keys (`keysAfter`, `keysBefore`: a key's id). */
  keysAt?: PageAt;
}

export interface PageProps extends PageState {
  company: Company;
  live: Settings;
  sandbox?: Settings;
  keys: Page<ApiKeySummary>;
  deliveries: WebhookDelivery[];
  /** Whether older (newer) deliveries lie beyond this page. */
  older: boolean;
  newer: boolean;
  /** The latest key revocations of the audit trail: who revoked which key, when. */
  revokedKeys: AuditEvent[];
  /** Older revocations than revokedKeys show are in the audit trail. */
  moreRevokedKeys: boolean;
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

/** The page's route, below the console's. */
export const PATH = '/companies/:companyId/integrations/rest-api';

/** Renders the page with what an action leaves on it. */
export type Show = (res: Response, status: number, state?: PageState) => Promise<void>;

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
      {delivery && <AttemptResponse attempt={delivery} />}
    </div>
  );
}

/** What the receiver responded to an attempt (untrusted text, as much as the delivery log keeps of it). */
export function AttemptResponse({ attempt }: { attempt: WebhookDelivery }) {
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
