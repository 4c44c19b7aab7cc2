import { Router, type Request, type Response } from 'express';
import type { Event, ListEventsQuery, RecoverInput, RecoverResult } from '../api-types.js';
import { COMPANY } from '../companies/index.js';
import { refuse } from '../core/errors.js';
import { pageLimit } from '../core/page-limit.js';
import { quoted } from '../core/quoted.js';
import { keyPrincipal } from '../core/request-context.js';
import type { Pool } from '../db/pool.js';
import { byKey, byOperator, type Doer } from '../audit/index.js';
import { findEvent, listEvents } from './events/events.js';
import { recoverFailedEvents, redeliverCompanyEvent } from './integration-actions.js';
import { eventNotFound } from './integration-error-wording.js';

/**
 * The events feed and redelivery: the partner's (`/events`, the key's company and mode) and the
 * application's (`/internal/companies/{companyId}/events…`, the company's live events), one
 * implementation of each action behind both.
 */

/** A page of the company's feed, with the next page's Link when more events follow. */
async function sendPage(db: Pool, companyId: string, req: Request, res: Response<Event[]>, path: string) {
  const { after } = req.query as ListEventsQuery;
  const limit = pageLimit(req);
  const page = await listEvents(db, companyId, { after, limit });
  if (page === 'unknown') throw refuse.badRequest(`after is not the id of one of your events: ${quoted(after!)}`);
  if (page === 'not_placed')
    throw refuse.badRequest(
      `after is not in the feed yet: event ${quoted(after!)} is still being recorded, and events before it may be too; resume from the last event the feed listed`,
    );
  const last = page.events.at(-1);
  if (page.more && last)
    res.set('Link', `<${path}?${new URLSearchParams({ limit: String(limit), after: last.id })}>; rel="next"`);
  res.json(page.events);
}

/** One attempt of the event now (202), as the partner and the application ask for it alike. */
async function redeliver(db: Pool, companyId: string, eventId: string, by: Doer, res: Response<Event>) {
  res.status(202).json(await redeliverCompanyEvent(db, companyId, eventId, by));
}

/** The partner's feed: the key's company (a test key's sandbox). */
export function eventsRouter(db: Pool): Router {
  const router = Router();
  router.get('/events', (req, res: Response<Event[]>) =>
    sendPage(db, keyPrincipal(req).companyId, req, res, '/events'),
  );

  router.get('/events/:eventId', async (req, res: Response<Event>) => {
    const event = await findEvent(db, keyPrincipal(req).companyId, req.params.eventId!);
    if (!event) throw refuse.notFound(eventNotFound(req.params.eventId!));
    res.json(event);
  });

  router.post('/events/:eventId/redeliver', (req, res: Response<Event>) =>
    redeliver(db, keyPrincipal(req).companyId, req.params.eventId!, byKey(req), res),
  );
  return router;
}

/** The application's view of a company's (live) events, and its recovery of failed ones. */
export function applicationEventsRoutes(router: Router, db: Pool): void {
  router.get(`${COMPANY}/events`, (req, res: Response<Event[]>) => {
    const companyId = req.params.companyId!;
    return sendPage(db, companyId, req, res, `/internal/companies/${companyId}/events`);
  });

  router.post(`${COMPANY}/events/redeliver`, async (req, res: Response<RecoverResult>) => {
    const companyId = req.params.companyId!;
    const since = new Date((req.body as RecoverInput).since);
    res.status(202).json({ queued: await recoverFailedEvents(db, companyId, since, byOperator(req, companyId)) });
  });

  router.post(`${COMPANY}/events/:eventId/redeliver`, (req, res: Response<Event>) =>
    redeliver(db, req.params.companyId!, req.params.eventId!, byOperator(req, req.params.companyId!), res),
  );
}
