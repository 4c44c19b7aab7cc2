import type { ApiKeySummary, CreatedKey } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { DEFAULT_PAGE_LIMIT } from '../core/page-limit.js';
import type { PageAt } from '../db/keyset.js';
import { findKey, generateKey, keyNotFound, revokeCompanyKey } from '../integrations/index.js';
import type { PageRouter } from './access.js';
import { companyOf, doerOf } from './company-param.js';
import type { PageDeps } from './deps.js';
import { redirectWith } from './flash.js';
import { CsrfField, FormError } from './form.js';
import { TableScroll } from './layout.js';
import { neighbours, PageLinks, listPositionHref } from './page-links.js';
import { render } from './render.js';
import { RevokeKeyPage } from './rest-api-confirm.js';
import { base, PATH, type PageProps, type Show } from './rest-api-view.js';
import { RevokedKeys } from './revoked-keys.js';
import { attempt } from './schema-check.js';
import { Time } from './time.js';

/**
 * The REST API page's API keys: "Generate API Key", the live and test keys a page at a time (newest
 * first, `keysAfter`/`keysBefore` a key's id), each key's "Revoke", and the keys revoked before.
 */

/** The keys a page lists, as many as a page of the application API's lists by default. */
export const KEYS_SHOWN = DEFAULT_PAGE_LIMIT;

export function KeysSection({ company, keys, newKey, keyErrors, revokedKeys, moreRevokedKeys }: PageProps) {
  const path = base(company.id);
  const href = (at: PageAt) => listPositionHref(path, {}, 'keys', at, 'keys-heading');
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
      {keys.rows.length === 0 ? (
        <p>No API keys.</p>
      ) : (
        <>
          <KeyTable companyId={company.id} keys={keys.rows} />
          <PageLinks what={['key', 'keys']} {...neighbours(keys, (key) => key.id, href)} />
        </>
      )}
      {revokedKeys.length > 0 && (
        <RevokedKeys
          entries={revokedKeys}
          more={moreRevokedKeys}
          trail={`/console/companies/${company.id}/audit?action=key.revoked`}
        />
      )}
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

/** "Generate API Key" (the new key shown once, from the flash) and each key's "Revoke" (after its confirmation). */
export function keyRoutes(router: PageRouter, { db, forms }: PageDeps, show: Show): void {
  router.post(`${PATH}/api-keys`, async (req, res) => {
    const company = companyOf(res.locals);
    const result = await forms.act<{ mode?: 'live' | 'test' }, CreatedKey>('ApiKeyInput', req.body, ({ mode }) =>
      generateKey(db, company.id, mode ?? 'live', doerOf(req, res)),
    );
    if ('value' in result) return redirectWith(db, res, base(company.id), { state: { newKey: result.value } });
    await show(res, result.status, { keyErrors: result.errors });
  });

  /** The company's key of the path, or the 404 page. */
  const keyOf = async (companyId: string, keyId: string) => {
    const key = await findKey(db, companyId, keyId);
    if (!key) throw refuse.notFound(keyNotFound(keyId));
    return key;
  };

  router.get(`${PATH}/api-keys/:keyId/revoke`, async (req, res) => {
    const company = companyOf(res.locals);
    render(res, 200, <RevokeKeyPage company={company} apiKey={await keyOf(company.id, req.params.keyId!)} />);
  });

  router.post(`${PATH}/api-keys/:keyId/revoke`, async (req, res) => {
    const company = companyOf(res.locals);
    const key = await keyOf(company.id, req.params.keyId!);
    const refused = await attempt(() => revokeCompanyKey(db, company.id, key.id, doerOf(req, res)));
    if (!('value' in refused)) return show(res, refused.status, { keyErrors: refused.errors });
    const outcome = `Key ${key.prefix}… was revoked: a request with it is refused from now on.`;
    await redirectWith(db, res, base(company.id), { outcome });
  });
}
