import type { Request, Response } from 'express';
import type { Company, CreatedKey, RecoverInput, SecretRotationInput, WebhookInput } from '../api-types.js';
import { existingSandbox, sandboxOf } from '../companies/index.js';
import { HttpError } from '../core/errors.js';
import {
  generateKey,
  listDeliveries,
  noWebhookAddress,
  readIntegration,
  recoverFailedEvents,
  redeliverCompanyEvent,
  revokeCompanyKey,
  revealWebhookSecret,
  revokeIntegration,
  rotateWebhookSecret,
  saveWebhook,
  sendTestDelivery,
} from '../integrations/index.js';
import { companyOf, doerOf } from './company-param.js';
import { listAudit } from '../audit/index.js';
import type { PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { formValues } from './form.js';
import { render } from './render.js';
import { RestApiPage, RevokePage } from './rest-api-sections.js';
import { base, DELIVERIES_SHOWN, WHOSE, type PageState, type WebhookState, type World } from './rest-api-view.js';
import { refusalOf } from './schema-check.js';

const PATH = '/companies/:companyId/integrations/rest-api';
/** The latest revoked keys the page lists. */
const REVOKED_KEYS_SHOWN = 20;

/**
 * A `datetime-local` field's value ("2026-03-14T09:30") read as UTC, as RecoverInput's date-time needs
 * a zone; anything else goes to the schema check as typed, to be refused in the API's words.
 */
const sinceOf = (since: unknown) =>
  typeof since === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(since)
    ? `${since.length === 16 ? `${since}:00` : since}Z`
    : since;

type Show = (res: Response, status: number, state?: PageState) => Promise<void>;

/**
 * Settings > Integrations > REST API: keys, the live and sandbox webhooks, recent deliveries and their
 * redelivery, revoking the integration; each action the application API's own function, a success
 * answered 303 to the page (a redelivery's outcome in the query) unless it shows something once (a new
 * key, a secret) or a test delivery's outcome.
 */
export function restApiPage(router: PageRouter, deps: PageDeps): void {
  const { db } = deps;
  const show: Show = async (res, status, state = {}) => {
    const company = companyOf(res.locals);
    const sandboxId = await existingSandbox(db, company.id);
    const [live, sandbox, deliveries, revoked] = await Promise.all([
      readIntegration(db, company.id),
      sandboxId ? readIntegration(db, sandboxId) : undefined,
      listDeliveries(db, company.id, DELIVERIES_SHOWN),
      listAudit(db, company.id, { limit: REVOKED_KEYS_SHOWN, action: 'key.revoked' }),
    ]);
    const revokedKeys = revoked.entries;
    render(res, status, <RestApiPage {...{ company, live, sandbox, deliveries, revokedKeys, ...state }} />);
  };

  router.get(PATH, (req, res) => show(res, 200, { outcome: outcomeOf(req.query as Record<string, unknown>) }));
  keyRoutes(router, deps, show);
  for (const world of ['live', 'sandbox'] as const) webhookRoutes(router, deps, show, world);
  eventRoutes(router, deps, show);

  router.get(`${PATH}/revoke`, async (_req, res) => {
    const company = companyOf(res.locals);
    const { keys } = await readIntegration(db, company.id);
    render(res, 200, <RevokePage company={company} keys={keys.length} />);
  });

  router.post(`${PATH}/revoke`, async (req, res) => {
    await revokeIntegration(db, companyOf(res.locals).id, doerOf(req, res));
    res.redirect(303, base(companyOf(res.locals).id));
  });
}

/** "Generate API Key" (the new key shown once, from the POST's own answer) and each key's "Revoke". */
function keyRoutes(router: PageRouter, { db, forms }: PageDeps, show: Show): void {
  router.post(`${PATH}/api-keys`, async (req, res) => {
    const company = companyOf(res.locals);
    const result = await forms.act<{ mode?: 'live' | 'test' }, CreatedKey>('ApiKeyInput', req.body, ({ mode }) =>
      generateKey(db, company.id, mode ?? 'live', doerOf(req, res)),
    );
    if ('value' in result) return show(res, 201, { newKey: result.value });
    await show(res, result.status, { keyErrors: result.errors });
  });

  router.post(`${PATH}/api-keys/:keyId/revoke`, async (req, res) => {
    const company = companyOf(res.locals);
    const refused = await refusalOf(() => revokeCompanyKey(db, company.id, req.params.keyId!, doerOf(req, res)));
    if (!refused) return res.redirect(303, base(company.id));
    await show(res, refused.status, { keyErrors: refused.errors });
  });
}

/** "Save" (address and event types), "Reveal secret", "Rotate secret", "Send test delivery" of one world's webhook. */
function webhookRoutes(router: PageRouter, { db, forms, publishing }: PageDeps, show: Show, world: World): void {
  const path = `${PATH}/${world === 'live' ? 'webhook' : 'sandbox/webhook'}`;
  const showWith = (res: Response, status: number, state: WebhookState) =>
    show(res, status, { webhook: { [world]: state } });
  const ownerOf = async (company: Company) => (world === 'live' ? company.id : sandboxOf(db, company.id));

  // The address and the event types together, as PUT …/webhook takes them; no box ticked is no type.
  router.post(path, async (req, res) => {
    const company = companyOf(res.locals);
    const { eventTypes = [] } = req.body as { eventTypes?: string | string[] };
    const input = { ...(req.body as object), eventTypes: ([] as string[]).concat(eventTypes) };
    const result = await forms.act<WebhookInput, unknown>(
      'WebhookInput',
      input,
      async ({ url, eventTypes }) => saveWebhook(db, await ownerOf(company), url, eventTypes, doerOf(req, res)),
      () => 'url',
    );
    if ('value' in result) return res.redirect(303, base(company.id));
    const values = formValues(req.body);
    await showWith(res, result.status, { values, eventTypes: input.eventTypes, errors: result.errors });
  });

  // The secret is shown on this answer only (a POST: never in a URL, never kept by a cache).
  router.post(`${path}/secret/reveal`, async (req, res) => {
    const company = companyOf(res.locals);
    const ownerId = world === 'live' ? company.id : await existingSandbox(db, company.id);
    const secret = ownerId ? await revealWebhookSecret(db, ownerId, doerOf(req, res)) : null;
    if (secret) return showWith(res, 200, { secret });
    const refusal = noWebhookAddress(WHOSE[world]);
    await showWith(res, refusal.status, { errors: { '': refusal.message } });
  });

  router.post(`${path}/secret/rotate`, async (req, res) => {
    const company = companyOf(res.locals);
    const result = await forms.act<SecretRotationInput, unknown>('SecretRotationInput', req.body, async (input) =>
      rotateWebhookSecret(db, await ownerOf(company), WHOSE[world], input.overlapSeconds, doerOf(req, res)),
    );
    if ('value' in result) return res.redirect(303, base(company.id));
    await showWith(res, result.status, { errors: result.errors });
  });

  // The outcome on the page; a failure (502, 503, 409) with the API's message and status.
  router.post(`${path}/test`, async (req: Request, res) => {
    const checked = forms.check('WebhookTestInput', req.body);
    if (!('input' in checked)) return showWith(res, checked.status, { errors: checked.errors });
    const ownerId = await ownerOf(companyOf(res.locals));
    let test: NonNullable<WebhookState['test']>;
    try {
      const sent = await sendTestDelivery(db, publishing.notifier, ownerId, WHOSE[world], doerOf(req, res));
      test = { ok: true, status: 200, message: `the receiver answered HTTP ${sent.status}` };
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      test = { ok: false, status: err.status, message: err.message };
    }
    // The attempt just logged (none when there was nowhere to send it: 409).
    const [delivery] =
      test.status === 409 ? [] : (await listDeliveries(db, ownerId, DELIVERIES_SHOWN)).filter((d) => d.test);
    await showWith(res, test.status, { test: { ...test, delivery } });
  });
}

/** An event's id as the service makes them (signing.ts newWebhookId), bounded. */
const EVENT_ID = /^msg_[A-Za-z0-9_-]{1,64}$/;

/** The outcome line of a redelivery for the query its redirect carries; anything else in the query shows nothing. */
function outcomeOf({ outcome, event, queued }: Record<string, unknown>): string | undefined {
  if (outcome === 'redelivered' && typeof event === 'string' && EVENT_ID.test(event))
    return `Event ${event} queued for redelivery.`;
  if (outcome === 'recovered' && typeof queued === 'string' && /^\d{1,9}$/.test(queued))
    return `${queued} failed event(s) queued for redelivery.`;
  return undefined;
}

/**
 * "Redeliver" (one event) and "Redeliver failed since…" (the recovery): 303 to the page with the outcome
 * in its query (Post/Redirect/Get), so that reloading the page shows it again and sends nothing.
 */
function eventRoutes(router: PageRouter, { db, forms }: PageDeps, show: Show): void {
  router.post(`${PATH}/events/redeliver`, async (req, res) => {
    const company = companyOf(res.locals);
    const body = { ...(req.body as object), since: sinceOf((req.body as { since?: unknown }).since) };
    const result = await forms.act<RecoverInput, number>(
      'RecoverInput',
      body,
      ({ since }) => recoverFailedEvents(db, company.id, new Date(since), doerOf(req, res)),
      () => 'since',
    );
    if (!('value' in result))
      return show(res, result.status, { deliveryErrors: result.errors, values: formValues(req.body) });
    res.redirect(
      303,
      `${base(company.id)}?${new URLSearchParams({ outcome: 'recovered', queued: String(result.value) })}`,
    );
  });

  router.post(`${PATH}/events/:eventId/redeliver`, async (req, res) => {
    const eventId = req.params.eventId!;
    const by = doerOf(req, res);
    const refused = await refusalOf(() => redeliverCompanyEvent(db, companyOf(res.locals).id, eventId, by));
    if (refused) return show(res, refused.status, { deliveryErrors: refused.errors });
    const company = companyOf(res.locals);
    res.redirect(303, `${base(company.id)}?${new URLSearchParams({ outcome: 'redelivered', event: eventId })}`);
  });
}
