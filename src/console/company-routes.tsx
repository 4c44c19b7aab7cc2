import type { Company, User, UserInput } from '../api-types.js';
import { addInspector, listUsers } from '../companies/index.js';
import { companyOf } from './company-param.js';
import type { PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { redirectWith } from './flash.js';
import { CsrfField, Field, FormError, formValues } from './form.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import type { FieldErrors } from './schema-check.js';

/** The inspectors a company's page lists: the API's largest page. */
const INSPECTORS_SHOWN = 100;

interface CompanyProps {
  company: Company;
  inspectors: User[];
  values?: Record<string, string>;
  errors?: FieldErrors;
}

function CompanyPage({ company, inspectors, values, errors }: CompanyProps) {
  const base = `/console/companies/${company.id}`;
  return (
    <Layout title={company.name}>
      <nav aria-label="Company">
        <ul>
          <li>
            <a href={`${base}/integrations/rest-api`}>REST API</a>
          </li>
          <li>
            <a href={`${base}/reports`}>Reports</a>
          </li>
          <li>
            <a href={`${base}/users`}>Users</a>
          </li>
          <li>
            <a href={`${base}/audit`}>Audit trail</a>
          </li>
        </ul>
      </nav>
      <h2>Inspectors</h2>
      {inspectors.length === 0 ? (
        <p>No inspectors yet.</p>
      ) : (
        <ul>
          {inspectors.map((user) => (
            <li key={user.id}>
              {user.name} ({user.email})
            </li>
          ))}
        </ul>
      )}
      <form method="post" action={`${base}/inspectors`}>
        <h2>New inspector</h2>
        <CsrfField />
        <FormError errors={errors} />
        <Field form="inspector" name="name" label="Name" value={values?.name} errors={errors} />
        <Field form="inspector" name="email" label="E-mail" type="email" value={values?.email} errors={errors} />
        <button type="submit">Add inspector</button>
      </form>
    </Layout>
  );
}

/** A company's page (its inspectors and its settings' links) and POST …/inspectors ("Add inspector"). */
export function companyRoutes(router: PageRouter, { db, forms }: PageDeps): void {
  const props = async (company: Company) => ({
    company,
    inspectors: await listUsers(db, company.id, INSPECTORS_SHOWN),
  });

  router.get('/companies/:companyId', async (_req, res) => {
    render(res, 200, <CompanyPage {...await props(companyOf(res.locals))} />);
  });

  router.post('/companies/:companyId/inspectors', async (req, res) => {
    const company = companyOf(res.locals);
    const result = await forms.act<UserInput, User>(
      'UserInput',
      req.body,
      ({ name, email }) => addInspector(db, company.id, name, email),
      // The one refusal of an inspector is a second one with the e-mail.
      () => 'email',
    );
    if ('value' in result)
      return redirectWith(db, res, `/console/companies/${company.id}`, { outcome: 'The inspector was added.' });
    const page = { ...(await props(company)), values: formValues(req.body), errors: result.errors };
    render(res, result.status, <CompanyPage {...page} />);
  });
}
