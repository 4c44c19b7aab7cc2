import type { Company, PublishInput, PublishResult, Report } from '../api-types.js';
import { HttpError, isRefusal, refuse } from '../core/errors.js';
import { listDeliveries, notificationApplies, publishReport, startReport } from '../integrations/index.js';
import { findForCompany, reportNotFound, type PublishPrecondition } from '../reports/index.js';
import { companyOf, doerOf } from './company-param.js';
import type { Doer } from '../audit/index.js';
import type { PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { flashOf, redirectWith } from './flash.js';
import { formValues } from './form.js';
import { render } from './render.js';
import { publishOutcomeText } from './report-outcome.js';
import { ReportPage, type PublishStep, type ReportProps } from './report-view.js';
import { reportsOf } from './reports-inbox.js';

/** The PublishInput each of the inspector's choices (the form's `answer`) sends. */
const PUBLISH_CHOICES: Record<string, Omit<PublishInput, 'publishedUrl'>> = {
  notify: { notifyIntegration: true },
  skip: { notifyIntegration: false },
  background: { notifyIntegration: true, whenDeliveryFails: 'retry' },
};
/** A failed notification: the receiver's error (502), or no delivery slot free (503); nothing was published. */
const notificationFailed = (err: unknown): err is HttpError =>
  err instanceof HttpError && (err.status === 502 || err.status === 503);

/** What the form says the report was when its page was shown (publishedAt: see publishedAtOf). */
function shownState(body: unknown): { publishedAt: string } {
  const { publishedAt } = (body ?? {}) as { publishedAt?: unknown };
  if (typeof publishedAt !== 'string') throw refuse.badRequest('the form is out of date: open the report again');
  return { publishedAt };
}

/**
 * A report's page (GET …/reports/:reportId), "Start" (POST …/start) and "Publish" (POST …/publish):
 * the same functions as the application API's routes (startReport, publishReport). The page shows the
 * publish step its flash holds (the question, a failed notification), else the publish form.
 */
export function reportActionRoutes(router: PageRouter, deps: PageDeps): void {
  const { db } = deps;

  router.get('/companies/:companyId/reports/:reportId', async (req, res) => {
    const company = companyOf(res.locals);
    const report = await reportOf(deps, company, req.params.reportId!);
    const { publish = { step: 'form' } } = (flashOf(res)?.state ?? {}) as { publish?: PublishStep };
    render(res, 200, <ReportPage company={company} report={report} publish={publish} />);
  });

  router.post('/companies/:companyId/reports/:reportId/start', async (req, res) => {
    const company = companyOf(res.locals);
    const report = await reportOf(deps, company, req.params.reportId!);
    try {
      await startReport(db, company.id, report.id, doerOf(req, res));
    } catch (err) {
      if (!(err instanceof HttpError) || err.status >= 500) throw err;
      const page = { company, report, publish: { step: 'form' } as const, startErrors: { '': err.message } };
      return render(res, err.status, <ReportPage {...page} />);
    }
    await redirectWith(db, res, `${reportsOf(company)}/${report.id}`, { outcome: 'Started.' });
  });

  publishRoute(router, deps);
}

/**
 * "Publish" and the forms after it (the question's, a failed notification's), each carrying the
 * report's publish state as its page showed it (publishedAt): a form sent again after its publish is
 * refused, not published twice.
 */
function publishRoute(router: PageRouter, deps: PageDeps): void {
  const { db } = deps;
  router.post('/companies/:companyId/reports/:reportId/publish', async (req, res) => {
    const company = companyOf(res.locals);
    const report = await reportOf(deps, company, req.params.reportId!);
    const page = `${reportsOf(company)}/${report.id}`;
    // A step to show next (the question, a failed notification) is the report's page with it in the flash.
    const step = (publish: PublishStep) => redirectWith(db, res, page, { state: { publish } });
    const again = (status: number, props: Partial<ReportProps>) =>
      render(res, status, <ReportPage company={company} report={report} publish={{ step: 'form' }} {...props} />);
    const { publishedUrl, answer } = req.body as { publishedUrl?: unknown; answer?: unknown };
    const shown = shownState(req.body);

    let input: Record<string, unknown>;
    if (answer === undefined) {
      // "Publish": the question first when the webhook's rules apply, once the address is one the API takes.
      if (await notificationApplies(db, company.id, report.id)) {
        const checked = await deps.forms.check<PublishInput>('PublishInput', {
          publishedUrl,
          notifyIntegration: false,
        });
        if (!('input' in checked))
          return again(checked.status, { values: formValues(req.body), errors: checked.errors });
        return step({ step: 'question', publishedUrl: checked.input.publishedUrl, ...shown });
      }
      input = { publishedUrl, notifyIntegration: false };
    } else if (typeof answer === 'string' && Object.hasOwn(PUBLISH_CHOICES, answer)) {
      input = { publishedUrl, ...PUBLISH_CHOICES[answer] };
    } else {
      throw refuse.badRequest('answer must be one of notify, skip, background');
    }

    // The report's newest attempt before this publish: a newer one after a failure is the one it made.
    const attempted = () => listDeliveries(db, company.id, 1, report.id).then(([latest]) => latest);
    const before = await attempted();
    const result = await publish(deps, company, report, input, shown, doerOf(req, res));
    if (!('value' in result)) return again(result.status, { values: formValues(req.body), errors: result.errors });
    if ('meanwhile' in result.value) {
      // The report as it is now, and only a way back to it: no form that could publish it again at once.
      const now = await reportOf(deps, company, report.id);
      const props = { company, report: now, publish: { step: 'meanwhile' } as const };
      return render(res, result.value.meanwhile.status, <ReportPage {...props} />);
    }
    if ('failed' in result.value) {
      const { failed } = result.value;
      const latest = await attempted();
      const attempt = latest && latest.id !== before?.id ? latest : undefined;
      return step({ step: 'failed', publishedUrl: String(publishedUrl), error: failed.message, ...shown, attempt });
    }
    await redirectWith(db, res, page, { outcome: publishOutcomeText(result.value) });
  });
}

/** The company's report, or the 404 page (another company's report is unknown here). */
async function reportOf({ db }: PageDeps, company: Company, reportId: string): Promise<Report> {
  const report = await findForCompany(db, company.id, reportId);
  if (!report) throw refuse.notFound(reportNotFound(reportId));
  return report;
}

/**
 * publishReport on the input checked against PublishInput, provided the report is still as the form's
 * page showed it; a failed notification (nothing published) and a report published meanwhile get
 * pages of their own: the receiver's error with the inspector's choices, or the way back to the report.
 */
function publish(
  { db, forms, publishing }: PageDeps,
  company: Company,
  report: Report,
  input: unknown,
  shown: PublishPrecondition,
  by: Doer,
) {
  return forms.act<PublishInput, PublishResult | { failed: HttpError } | { meanwhile: HttpError }>(
    'PublishInput',
    input,
    async (checked) => {
      try {
        const published = await publishReport(db, publishing, company.id, report.id, checked, by, shown);
        if (!published) throw refuse.notFound(reportNotFound(report.id));
        return published;
      } catch (err) {
        if (notificationFailed(err)) return { failed: err };
        if (isRefusal(err, 'PUBLISHED_MEANWHILE')) return { meanwhile: err };
        throw err;
      }
    },
    // A second publish while one is delivering (409), or the report gone, belongs to the action.
    (refusal) => (refusal.status === 409 || refusal.status === 404 ? '' : 'publishedUrl'),
  );
}
