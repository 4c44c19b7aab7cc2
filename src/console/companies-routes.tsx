import type { Company, CompanyInput } from '../api-types.js';
import { createCompany, listCompanies } from '../companies/index.js';
import { DEFAULT_PAGE_LIMIT } from '../core/page-limit.js';
import type { PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { redirectWith } from './flash.js';
import { CsrfField, Field, FormError, formValues } from './form.js';
import { Layout } from './layout.js';
import { PageLinks } from './page-links.js';
import { render } from './render.js';
import type { FieldErrors } from './schema-check.js';

interface CompaniesProps {
  companies: Company[];
  /** Whether older (newer) companies follow this page's last (precede its first). */
  older: boolean;
  newer: boolean;
  values?: Record<string, string>;
  errors?: FieldErrors;
}

function CompaniesPage({ companies, older, newer, values, errors }: CompaniesProps) {
  return (
    <Layout title="Companies">
      <form method="post" action="/console/companies">
        <h2>New company</h2>
        <CsrfField />
        <FormError errors={errors} />
        <Field form="company" name="name" label="Name" value={values?.name} errors={errors} />
        <button type="submit">Create company</button>
      </form>
      <h2>All companies</h2>
      {companies.length === 0 ? (
        <p>No companies yet.</p>
      ) : (
        <ul>
          {companies.map((company) => (
            <li key={company.id}>
              <a href={`/console/companies/${company.id}`}>{company.name}</a>
            </li>
          ))}
        </ul>
      )}
      <PageLinks
        what={['company', 'companies']}
        up={newer ? (companies[0] ? `/console/companies?before=${companies[0].id}` : '/console/companies') : undefined}
        down={older && companies.length > 0 ? `/console/companies?after=${companies.at(-1)!.id}` : undefined}
      />
    </Layout>
  );
}

/** GET /console/companies (newest first, a page at a time) and POST /console/companies ("Create company"). */
export function companiesRoutes(router: PageRouter, { db, forms }: PageDeps): void {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const page = (query: Record<string, unknown> = {}) =>
    listCompanies(db, { limit: DEFAULT_PAGE_LIMIT, after: text(query.after), before: text(query.before) });

  router.get('/companies', async (req, res) => {
    render(res, 200, <CompaniesPage {...await page(req.query)} />);
  });

  router.post('/companies', async (req, res) => {
    const result = await forms.act<CompanyInput, Company>('CompanyInput', req.body, ({ name }) =>
      createCompany(db, name),
    );
    if ('value' in result)
      return redirectWith(db, res, `/console/companies/${result.value.id}`, { outcome: 'The company was created.' });
    const props = { ...(await page()), values: formValues(req.body), errors: result.errors };
    render(res, result.status, <CompaniesPage {...props} />);
  });
}
