import type { Request, Response } from 'express';
import type { Company, RecoverInput, SecretRotation, SecretRotationInput, WebhookInput } from '../api-types.js';
import { existingSandbox, sandboxOf } from '../companies/index.js';
import { HttpError } from '../core/errors.js';
import {
  listDeliveries,
  pageDeliveries,
  pageKeys,
  noWebhookAddress,
  readIntegration,
  readIntegrationSettings,
  recoverFailedEvents,
  redeliverCompanyEvent,
  revealWebhookSecret,
  revokeIntegration,
  rotateWebhookSecret,
  saveWebhook,
  sendTestDelivery,
} from '../integrations/index.js';
import { companyOf, doerOf } from './company-param.js';
import { listAudit } from '../audit/index.js';
import type { PageRouter } from './access.js';
import type { Pool } from '../db/pool.js';
import type { PageDeps } from './deps.js';
import { flashOf, redirectWith } from './flash.js';
import { formValues } from './form.js';
import { listPositionsOf } from './page-links.js';
import { render } from './render.js';
import { RevokePage, RotatePage } from './rest-api-confirm.js';
import { keyRoutes, KEYS_SHOWN } from './rest-api-keys.js';
import { RestApiPage } from './rest-api-sections.js';
import {
  base,
  DELIVERIES_SHOWN,
  PATH,
  REVOKED_KEYS_SHOWN,
  sinceOf,
  textOf,
  WEBHOOK_NAMES,
  WHOSE,
  type PageState,
  type Show,
  type WebhookState,
  type WebhookMode,
} from './rest-api-view.js';
import { attempt } from './schema-check.js';
import { utcText } from './time.js';

/**
 * Settings > Integrations > REST API: keys, the live and sandbox webhooks, recent deliveries and their
 * redelivery, revoking the integration; each action the application API's own function, a success
 * redirected (303) to the page with what it did in the flash (a new key and a secret too, shown once).
 * "Revoke" (a key), "Rotate secret" and "Revoke REST API Integration" ask first, on a page of their own.
 */
export function restApiRoutes(router: PageRouter, deps: PageDeps): void {
  const { db } = deps;
  const show: Show = async (res, status, state = {}) => {
    const company = companyOf(res.locals);
    const sandboxId = await existingSandbox(db, company.id);
    const [live, sandbox, keys, log, revoked] = await Promise.all([
      readIntegrationSettings(db, company.id),
      sandboxId ? readIntegrationSettings(db, sandboxId) : undefined,
      pageKeys(db, company.id, KEYS_SHOWN, state.keysAt ?? {}),
      pageDeliveries(db, company.id, DELIVERIES_SHOWN, state.deliveriesAt ?? {}),
      listAudit(db, company.id, { limit: REVOKED_KEYS_SHOWN, action: 'key.revoked' }),
    ]);
    const page = {
      company,
      live,
      sandbox,
      keys,
      ...log,
      revokedKeys: revoked.entries,
      moreRevokedKeys: revoked.more,
      ...state,
    };
    render(res, status, <RestApiPage {...page} />);
  };

  // The keys' and the recent deliveries' pages (`older`/`newer`: a delivery's id), and what the action
  // that led here did.
  router.get(PATH, (req, res) => {
    const { older, newer } = req.query as Record<string, unknown>;
    const deliveriesAt = { older: textOf(older), newer: textOf(newer) };
    const { keys: keysAt } = listPositionsOf(req.query, ['keys']);
    return show(res, 200, { ...(flashOf(res)?.state as PageState | undefined), deliveriesAt, keysAt });
  });
  keyRoutes(router, deps, show);
  for (const mode of ['live', 'sandbox'] as const) webhookRoutes(router, deps, show, mode);
  eventRoutes(router, deps, show);

  router.get(`${PATH}/revoke`, async (_req, res) => {
    const company = companyOf(res.locals);
    const { keys } = await readIntegration(db, company.id);
    render(res, 200, <RevokePage company={company} keys={keys.length} />);
  });

  router.post(`${PATH}/revoke`, async (req, res) => {
    const company = companyOf(res.locals);
    await revokeIntegration(db, company.id, doerOf(req, res));
    const outcome = 'The REST API integration was revoked: its keys are refused and its webhook addresses deleted.';
    await redirectWith(db, res, base(company.id), { outcome });
  });
}

/** The live or sandbox webhook's routes' path, its page with the section's state, and its owner (the company or its sandbox). */
function webhookOf(db: Pool, show: Show, mode: WebhookMode) {
  return {
    path: `${PATH}/${mode === 'live' ? 'webhook' : 'sandbox/webhook'}`,
    showWith: (res: Response, status: number, state: WebhookState) => show(res, status, { webhook: { [mode]: state } }),
    ownerOf: async (company: Company) => (mode === 'live' ? company.id : sandboxOf(db, company.id)),
  };
}

/** "Save" (address and event types), "Reveal secret", "Rotate secret", "Send test delivery" of the live or the sandbox webhook. */
function webhookRoutes(router: PageRouter, deps: PageDeps, show: Show, mode: WebhookMode): void {
  const { db, forms } = deps;
  const { path, showWith, ownerOf } = webhookOf(db, show, mode);

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
    if ('value' in result)
      return redirectWith(db, res, base(company.id), { outcome: `The ${WEBHOOK_NAMES[mode]} address was saved.` });
    const values = formValues(req.body);
    await showWith(res, result.status, { values, eventTypes: input.eventTypes, errors: result.errors });
  });

  // The secret is shown once by the page the redirect names, from the (sealed) flash: never in a URL.
  router.post(`${path}/secret/reveal`, async (req, res) => {
    const company = companyOf(res.locals);
    const ownerId = mode === 'live' ? company.id : await existingSandbox(db, company.id);
    const secret = ownerId ? await revealWebhookSecret(db, ownerId, doerOf(req, res)) : null;
    if (secret) return redirectWith(db, res, base(company.id), { state: { webhook: { [mode]: { secret } } } });
    const refusal = noWebhookAddress(WHOSE[mode]);
    await showWith(res, refusal.status, { errors: { '': refusal.message } });
  });

  router.get(`${path}/secret/rotate`, (_req, res) => {
    render(res, 200, <RotatePage company={companyOf(res.locals)} mode={mode} />);
  });

  router.post(`${path}/secret/rotate`, async (req, res) => {
    const company = companyOf(res.locals);
    const result = await forms.act<SecretRotationInput, SecretRotation>(
      'SecretRotationInput',
      req.body,
      async (input) =>
        rotateWebhookSecret(db, await ownerOf(company), WHOSE[mode], input.overlapSeconds, doerOf(req, res)),
    );
    if (!('value' in result)) return showWith(res, result.status, { errors: result.errors });
    const until = result.value.previousSecretExpiresAt;
    const outcome = `The ${WEBHOOK_NAMES[mode]} signing secret was rotated${until ? `: the previous one signs too until ${utcText(until)}` : ''}.`;
    await redirectWith(db, res, base(company.id), { outcome });
  });
  testDeliveryRoute(router, deps, show, mode);
}

/**
 * "Send test delivery": the outcome on the page; a failure (502, 503, 409) with the API's message and
 * status. htmx (HX-Request) swaps the outcome alone into the page it keeps, from this response; a form
 * sent without script is redirected (303), the outcome in the flash.
 */
function testDeliveryRoute(
  router: PageRouter,
  { db, forms, publishing }: PageDeps,
  show: Show,
  mode: WebhookMode,
): void {
  const { path, showWith, ownerOf } = webhookOf(db, show, mode);
  router.post(`${path}/test`, async (req: Request, res) => {
    const checked = await forms.check('WebhookTestInput', req.body);
    if (!('input' in checked)) return showWith(res, checked.status, { errors: checked.errors });
    const ownerId = await ownerOf(companyOf(res.locals));
    let test: NonNullable<WebhookState['test']>;
    try {
      const sent = await sendTestDelivery(db, publishing.notifier, ownerId, WHOSE[mode], doerOf(req, res));
      test = { ok: true, status: 200, message: `the receiver answered HTTP ${sent.status}` };
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      test = { ok: false, status: err.status, message: err.message };
    }
    // The attempt just logged (none when there was nowhere to send it: 409).
    const [delivery] =
      test.status === 409 ? [] : (await listDeliveries(db, ownerId, DELIVERIES_SHOWN)).filter((d) => d.test);
    const state = { test: { ...test, delivery } };
    if (req.get('hx-request') === 'true') return showWith(res, test.status, state);
    await redirectWith(db, res, base(companyOf(res.locals).id), { state: { webhook: { [mode]: state } } });
  });
}

/** "Redeliver" (one event) and "Redeliver failed since…" (the recovery): 303 to the page, the outcome in the flash. */
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
    const outcome = `${result.value} failed event(s) queued for redelivery.`;
    await redirectWith(db, res, base(company.id), { outcome });
  });

  router.post(`${PATH}/events/:eventId/redeliver`, async (req, res) => {
    const eventId = req.params.eventId!;
    const by = doerOf(req, res);
    const refused = await attempt(() => redeliverCompanyEvent(db, companyOf(res.locals).id, eventId, by));
    if (!('value' in refused)) return show(res, refused.status, { deliveryErrors: refused.errors });
    await redirectWith(db, res, base(companyOf(res.locals).id), { outcome: `Event ${eventId} queued for redelivery.` });
  });
}
