import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import { refuse } from '../core/errors.js';

/**
 * NIST SP 800-63B's rules for a password a person chooses: at least 12 characters (code points), refused
 * when it is a well-known common one, and no composition rules. The cap keeps hashing cheap and bounded.
 */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** zxcvbn-ts's list of common passwords (about 49,000, from leaked-password frequency lists), lower case. */
const COMMON = new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));

/**
 * argon2id with OWASP's parameters (memoryCost 19456, timeCost 2, parallelism 1): @node-rs/argon2 ships it prebuilt
 * (docs/decisions.md). The PHC string it returns keeps its parameters and salt with the hash.
 */
const ARGON2ID: Options = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** The same text typed on two devices is one password (NFKC, as 800-63B advises). */
const normal = (password: string) => password.normalize('NFKC');

/** Refuses (400, at `password`) a password the rules above do not allow. */
export function checkPassword(password: string): void {
  const length = [...normal(password)].length;
  if (length < PASSWORD_MIN) throw refuse.badRequest(`password must be at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw refuse.badRequest(`password must be at most ${PASSWORD_MAX} characters`);
  if (COMMON.has(normal(password).toLowerCase()))
    throw refuse.badRequest('password is a well-known common password: choose another');
}

export const hashPassword = (password: string): Promise<string> => hash(normal(password), ARGON2ID);

/** A hash of a password no one knows: checked against when the e-mail has no account, so both take as long. */
let nobody: Promise<string> | undefined;

/** Whether the password is the one hashed; with no hash, the same work and false. */
export async function passwordMatches(hashed: string | undefined, password: string): Promise<boolean> {
  if ([...password].length > PASSWORD_MAX) return false;
  const matches = await verify(
    hashed ?? (await (nobody ??= hashPassword(randomBytes(32).toString('hex')))),
    normal(password),
  );
  return hashed !== undefined && matches;
}
