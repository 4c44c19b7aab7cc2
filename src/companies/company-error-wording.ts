import { quoted } from '../core/quoted.js';
import type { FieldWording } from '../core/error-wording-types.js';

/** A user's fields' schema failures in words (after the field's name). */
export const COMPANY_FIELD_WORDING: FieldWording = {
  email: { pattern: 'must be an e-mail address' },
};

/** The 404 of a company id in a path. */
export const companyNotFound = (id: string) => `company ${quoted(id)} not found`;
