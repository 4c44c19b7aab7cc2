import type { Company } from '../api-types.js';
import { DEFAULT_EVENT_TYPES } from '../integrations/index.js';
import { CsrfField, Field, FormError } from './form.js';
import { Layout, TableScroll } from './layout.js';
import {
  base,
  Breadcrumb,
  cut,
  DELIVERIES_SHOWN,
  EXCERPT_SHOWN,
  EventTypesField,
  HEADINGS,
  TestOutcome,
  type PageProps,
  type Settings,
  type WebhookState,
  type WebhookMode,
} from './rest-api-view.js';
import { PageLinks } from './page-links.js';
import { KeysSection } from './rest-api-keys.js';
import { Time } from './time.js';

/** An address's secret (revealed on demand, shown once), its rotation and its test delivery. */
function WebhookActions({ path, id, view, state }: { path: string; id: string; view: Settings; state?: WebhookState }) {
  return (
    <>
      {view.previousSecretExpiresAt && (
        <p>
          The previous secret signs too until <Time at={view.previousSecretExpiresAt} />.
        </p>
      )}
      {state?.secret && (
        <p>
          Signing secret: <code id={`${id}-secret`}>{state.secret}</code>{' '}
          <button type="button" data-copy={`${id}-secret`}>
            Copy
          </button>
        </p>
      )}
      <div class="actions">
        <form method="post" action={`${path}/secret/reveal`} class="inline">
          <CsrfField />
          <button type="submit">Reveal secret</button>
        </form>
        <a href={`${path}/secret/rotate`} class="button">
          Rotate secret
        </a>
        {/* With script, the outcome alone is swapped into its status region (announced, the page kept). */}
        <form
          method="post"
          action={`${path}/test`}
          class="inline"
          hx-post={`${path}/test`}
          hx-target={`#${id}-test`}
          hx-select={`#${id}-test`}
          hx-swap="outerHTML"
        >
          <CsrfField />
          <button type="submit">Send test delivery</button>
        </form>
      </div>
    </>
  );
}

/** The live or the sandbox webhook ("Live webhook", "Sandbox webhook"): a labelled region, so its "Save" is its own. */
export function WebhookSection({
  company,
  mode,
  view,
  state,
}: {
  company: Company;
  mode: WebhookMode;
  view?: Settings;
  state?: WebhookState;
}) {
  const path = `${base(company.id)}/${mode === 'live' ? 'webhook' : 'sandbox/webhook'}`;
  const id = `${mode}-webhook`;
  const address = view?.webhookUrl ?? null;
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{HEADINGS[mode]}</h2>
      {address === null ? (
        <p>No webhook address is set.</p>
      ) : (
        <p>
          Status: {view!.webhookStatus}
          {view!.webhookStatus === 'disabled' && ` (${view!.webhookDisabledReason})`}
        </p>
      )}
      <form method="post" action={path}>
        <CsrfField />
        <FormError errors={state?.errors} />
        <Field
          form={id}
          name="url"
          label="Webhook address"
          type="url"
          value={state?.values?.url ?? address ?? ''}
          errors={state?.errors}
        />
        <EventTypesField
          form={id}
          chosen={state?.eventTypes ?? view?.eventTypes ?? DEFAULT_EVENT_TYPES}
          error={state?.errors?.eventTypes}
        />
        <button type="submit">Save</button>
      </form>
      {address !== null && <WebhookActions path={path} id={id} view={view!} state={state} />}
      <div role="status" id={`${id}-test`}>
        {state?.test && <TestOutcome test={state.test} />}
      </div>
    </section>
  );
}

/** Every attempt, newest first; each event's "Redeliver" on its newest attempt. */
function DeliveryTable({ path, deliveries }: { path: string; deliveries: PageProps['deliveries'] }) {
  const offered = new Set<string>();
  const caption = `Every attempt of the live webhook, newest first (the latest ${DELIVERIES_SHOWN})`;
  return (
    <TableScroll label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Answer or error</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => {
            // Each event once, on its newest attempt.
            const redeliver = d.eventId !== '' && !offered.has(d.eventId);
            if (redeliver) offered.add(d.eventId);
            return (
              <tr key={d.id}>
                <td>
                  <Time at={d.attemptedAt} />
                </td>
                <td>{d.test ? 'test delivery' : `${d.eventId || d.webhookId} (attempt ${d.attempt})`}</td>
                <td>{d.httpStatus ?? 'none'}</td>
                <td>
                  {d.error && <p>{cut(d.error, EXCERPT_SHOWN)}</p>}
                  {d.responseExcerpt && <pre>{cut(d.responseExcerpt, EXCERPT_SHOWN)}</pre>}
                </td>
                <td>
                  {redeliver && (
                    <form
                      method="post"
                      action={`${path}/events/${encodeURIComponent(d.eventId)}/redeliver`}
                      class="inline"
                    >
                      <CsrfField />
                      <button type="submit">Redeliver</button>
                    </form>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

function DeliveriesSection({ company, deliveries, deliveryErrors, values, older, newer }: PageProps) {
  const path = base(company.id);
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Recent deliveries</h2>
      <form method="post" action={`${path}/events/redeliver`}>
        <CsrfField />
        <FormError errors={deliveryErrors} />
        <Field
          form="recover"
          name="since"
          label="Failed since (UTC)"
          type="datetime-local"
          value={values?.since}
          errors={deliveryErrors}
        />
        <button type="submit">Redeliver failed since…</button>
      </form>
      {deliveries.length === 0 ? <p>No deliveries yet.</p> : <DeliveryTable path={path} deliveries={deliveries} />}
      <PageLinks
        what={['delivery', 'deliveries']}
        up={newer ? (deliveries[0] ? `${path}?newer=${deliveries[0].id}#deliveries-heading` : path) : undefined}
        down={older && deliveries.length > 0 ? `${path}?older=${deliveries.at(-1)!.id}#deliveries-heading` : undefined}
      />
    </section>
  );
}

export function RestApiPage(props: PageProps) {
  const { company, live, sandbox, webhook } = props;
  return (
    <Layout title="REST API">
      <Breadcrumb company={company} />
      <KeysSection {...props} />
      <WebhookSection company={company} mode="live" view={live} state={webhook?.live} />
      <WebhookSection company={company} mode="sandbox" view={sandbox} state={webhook?.sandbox} />
      <DeliveriesSection {...props} />
      <section aria-labelledby="revoke-heading">
        <h2 id="revoke-heading">Revoke the integration</h2>
        <p>
          <a href={`${base(company.id)}/revoke`}>Revoke REST API Integration</a>
        </p>
      </section>
    </Layout>
  );
}
