/** The companies component: accounts and their users, as the other components may use them. */
export { addInspector, addUser, countCompanies, createCompany, existingSandbox, sandboxOf } from './companies.js';
export { findCompany, listCompanies, listUsers } from './listing.js';
export { COMPANY, companiesRouter, requireCompany } from './routes.js';
export { COMPANY_FIELD_WORDING, companyNotFound } from './company-error-wording.js';
