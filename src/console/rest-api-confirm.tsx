import type { ApiKeySummary, Company } from '../api-types.js';
import { DEFAULT_SECRET_OVERLAP_SECONDS } from '../integrations/index.js';
import { ConfirmPage } from './confirm-view.js';
import { base, Breadcrumb, WEBHOOK_NAMES, type WebhookMode } from './rest-api-view.js';
import { Time } from './time.js';

/** The REST API page's actions that cannot be undone, each asked first (confirm-view.tsx). */

export function RevokePage({ company, keys }: { company: Company; keys: number }) {
  return (
    <ConfirmPage
      title="Revoke REST API Integration?"
      context={<Breadcrumb company={company} />}
      action={`${base(company.id)}/revoke`}
      button="Revoke REST API Integration"
      cancel={base(company.id)}
    >
      <p>
        This deletes the REST API integration of {company.name}: its {keys} API {keys === 1 ? 'key' : 'keys'} (live and
        test), which partners are refused with at once, the live and sandbox webhook addresses and their signing
        secrets, and every delivery not yet made. Reports already received stay. It cannot be undone: a new key starts a
        new integration.
      </p>
    </ConfirmPage>
  );
}

export function RevokeKeyPage({ company, apiKey }: { company: Company; apiKey: ApiKeySummary }) {
  return (
    <ConfirmPage
      title={`Revoke key ${apiKey.prefix}…?`}
      context={<Breadcrumb company={company} />}
      action={`${base(company.id)}/api-keys/${apiKey.id}/revoke`}
      button="Revoke"
      cancel={base(company.id)}
    >
      <p>
        A partner using this {apiKey.mode} key (created <Time at={apiKey.createdAt} />) is refused from its very next
        request. It cannot be undone: the partner needs a new key.
      </p>
    </ConfirmPage>
  );
}

export function RotatePage({ company, mode }: { company: Company; mode: WebhookMode }) {
  const path = `${base(company.id)}/${mode === 'live' ? 'webhook' : 'sandbox/webhook'}`;
  return (
    <ConfirmPage
      title={`Rotate the ${WEBHOOK_NAMES[mode]} signing secret?`}
      context={<Breadcrumb company={company} />}
      action={`${path}/secret/rotate`}
      button="Rotate secret"
      cancel={base(company.id)}
    >
      <p>
        A new secret signs every webhook from now on; the previous one signs them too for{' '}
        {DEFAULT_SECRET_OVERLAP_SECONDS / 3600} hours, so that the receiver can be given the new one meanwhile (reveal
        it on the REST API page).
      </p>
    </ConfirmPage>
  );
}
