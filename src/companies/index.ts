// The companies component's public surface: accounts and their users.

export { addInspector, addUser, countCompanies, createCompany, existingSandbox, sandboxOf } from './companies.js';
export { findCompany, listCompanies, listUsers } from './listing.js';
export { COMPANY, companiesRouter, requireCompany } from './routes.js';
export { COMPANY_FIELD_WORDING, companyNotFound } from './company-error-wording.js';
export {
  accountCompany,
  changePassword,
  changeRole,
  endSessions,
  pagePeople,
  removeAccount,
  ROLES,
  signInAccount,
  type Account,
  type Person,
  type Role,
} from './accounts.js';
export {
  acceptInvitation,
  invitationOf,
  invite,
  pageInvitations,
  revokeInvitation,
  type Invitation,
  type InvitationView,
} from './invitations.js';
export { checkPassword, hashPassword, PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';
