import type { ComponentChildren } from 'preact';
import type { Company, Report, WebhookDelivery } from '../api-types.js';
import { CsrfField, Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { Badge, day, reportsOf, STATUS_LABELS } from './reports-inbox.js';
import { AttemptResponse } from './rest-api-view.js';
import type { FieldErrors } from './schema-check.js';
import { Time } from './time.js';

/** The report's fields as the application shows them, in the Report schema's order. */
function fieldsOf(report: Report): [string, ComponentChildren][] {
  return [
    ['Address', report.address],
    ['Client', report.clientName],
    ['Client e-mail', report.clientEmail],
    ['Client phone', report.clientPhone],
    ['Agent', report.agentName],
    ['Agent e-mail', report.agentEmail],
    ['Agent phone', report.agentPhone],
    ['Inspector', report.inspectorName],
    ['Inspector e-mail', report.inspectorEmail],
    ['Notes', report.inspectorNotes],
    ['Inspection date', day(report)],
    ['Source', report.fromRestService],
    ['REST id', report.restId],
    ['Published address', report.publishedUrl],
    ['Year built', report.yearBuilt],
    ['Square feet', report.squareFeet],
    ['Invoice items', report.invoiceItems.join('\n')],
    ['Created', <Time at={report.createdAt} />],
    ['Updated', <Time at={report.updatedAt} />],
    ['Id', report.id],
  ];
}
/** Which part of the report's page is shown: the publish form, the question, or a failed notification. */
export type PublishStep =
  | { step: 'form' }
  | { step: 'question'; publishedUrl: string; publishedAt: string }
  | { step: 'failed'; publishedUrl: string; publishedAt: string; error: string; attempt?: WebhookDelivery }
  | { step: 'meanwhile' };

/**
 * The report's publish state as a page shows it, which its publish forms carry (`publishedAt`) so that
 * the publish refuses a report published since (a second click, another person): its last publish, or
 * '' while it is unpublished (the reports component's PublishPrecondition).
 */
const publishedAtOf = (report: Report) => (report.status === 'published' ? report.updatedAt : '');

export interface ReportProps {
  company: Company;
  report: Report;
  publish: PublishStep;
  values?: Record<string, string>;
  errors?: FieldErrors;
  startErrors?: FieldErrors;
}

/** A form that publishes the report with the address given and the inspector's answer. */
function PublishForm({
  action,
  publishedUrl,
  publishedAt,
  children,
}: {
  action: string;
  publishedUrl: string;
  publishedAt: string;
  children: ComponentChildren;
}) {
  return (
    <form method="post" action={action} data-submit-once="">
      <CsrfField />
      <input type="hidden" name="publishedUrl" value={publishedUrl} />
      <input type="hidden" name="publishedAt" value={publishedAt} />
      {children}
    </form>
  );
}

/** A failed notification: the receiver's error, and the inspector's choices (nothing was published). */
function FailedPart({ action, publish }: { action: string; publish: Extract<PublishStep, { step: 'failed' }> }) {
  return (
    <PublishForm action={action} publishedUrl={publish.publishedUrl} publishedAt={publish.publishedAt}>
      <h2 id="publish-step" tabindex={-1} autofocus>
        The notification failed
      </h2>
      <p class="form-error" role="alert">
        {publish.error}
      </p>
      {publish.attempt && <AttemptResponse attempt={publish.attempt} />}
      <p>Nothing was published.</p>
      <button type="submit" name="answer" value="notify">
        Retry
      </button>{' '}
      <button type="submit" name="answer" value="skip">
        Skip notification
      </button>{' '}
      <button type="submit" name="answer" value="background">
        Retry in the background
      </button>
    </PublishForm>
  );
}

/** A form sent after the report was published (a second click, another person): only the way back to it. */
function MeanwhilePart({ report, reload }: { report: Report; reload: string }) {
  return (
    <>
      <h2>Published meanwhile</h2>
      <p class="form-error" role="alert">
        This report was published meanwhile (at <Time at={report.updatedAt} />, to {report.publishedUrl}): nothing was
        published or sent now.
      </p>
      <p>
        <a href={reload}>Open the report again</a> to see it as it is; publish it again from there if it should be.
      </p>
    </>
  );
}

/** The publish form, the question "Notify the integration?", a failed notification, or a publish come too late. */
function PublishPart({
  action,
  reload,
  report,
  publish,
  values,
  errors,
}: Pick<ReportProps, 'report' | 'publish' | 'values' | 'errors'> & { action: string; reload: string }) {
  return (
    <>
      {publish.step === 'form' && (
        <form method="post" action={action} data-submit-once="">
          <h2>Publish</h2>
          <CsrfField />
          <input type="hidden" name="publishedAt" value={publishedAtOf(report)} />
          <FormError errors={errors} />
          <Field
            form="publish"
            name="publishedUrl"
            label="Published address"
            type="url"
            value={values?.publishedUrl ?? report.publishedUrl}
            errors={errors}
          />
          <button type="submit">Publish</button>
        </form>
      )}
      {publish.step === 'question' && (
        <PublishForm action={action} publishedUrl={publish.publishedUrl} publishedAt={publish.publishedAt}>
          <fieldset id="publish-step" tabindex={-1} autofocus>
            <legend>Notify the integration?</legend>
            <p>This report came from the REST API: its integration can be sent the published report.</p>
            <button type="submit" name="answer" value="notify">
              Notify
            </button>{' '}
            <button type="submit" name="answer" value="skip">
              Publish without notifying
            </button>
          </fieldset>
        </PublishForm>
      )}
      {publish.step === 'failed' && <FailedPart action={action} publish={publish} />}
      {publish.step === 'meanwhile' && <MeanwhilePart report={report} reload={reload} />}
    </>
  );
}

/** A report's page; the question after "Publish" or a failed notification takes the focus (and the view). */
export function ReportPage({ company, report, publish, values, errors, startErrors }: ReportProps) {
  const base = `${reportsOf(company)}/${report.id}`;
  return (
    <Layout title="Report" focusOwn={publish.step === 'question' || publish.step === 'failed'}>
      <p>
        <a href={reportsOf(company)}>Reports</a>
      </p>
      <p>
        {STATUS_LABELS[report.status]} <Badge report={report} />
      </p>
      <dl class="report-fields">
        {fieldsOf(report).map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {report.status !== 'published' && (
        <form method="post" action={`${base}/start`} data-submit-once="">
          <CsrfField />
          <FormError errors={startErrors} />
          <button type="submit">Start</button>
        </form>
      )}
      <PublishPart
        action={`${base}/publish`}
        reload={base}
        report={report}
        publish={publish}
        values={values}
        errors={errors}
      />
    </Layout>
  );
}
