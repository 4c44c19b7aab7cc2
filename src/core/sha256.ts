import { hash } from 'node:crypto';

/** The SHA-256 digest of text (UTF-8): keys, tokens and sessions are kept and found by it, bodies compared. */
export const sha256 = (text: string): Buffer => hash('sha256', text, 'buffer');
