import { HttpError } from '../core/errors.js';
import type { FieldWording } from '../core/error-wording-types.js';
import type { BodyValidator } from '../platform/http/body-validator.js';
import { describeValidationErrors, type ValidatorItem } from '../platform/http/validation-messages.js';

/** A form's errors by field name; '' holds the one that belongs to no field of the form. */
export type FieldErrors = Record<string, string>;

/** A form the action refused: the page is rendered again with these errors and this status. */
export interface Refused {
  status: number;
  errors: FieldErrors;
}

/** A bodiless action's refusal (an HttpError below 500) as the form's error, with its status; anything else is thrown on. */
export async function refusalOf(action: () => Promise<unknown>): Promise<Refused | undefined> {
  try {
    await action();
    return undefined;
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500) throw err;
    return { status: err.status, errors: { '': err.message } };
  }
}

/** The field a refusal's message names (its first word), of those the validator's items point at. */
function fieldNamed(items: ValidatorItem[], message: string): string {
  return items.map((i) => (i.path ?? '').split('/')[2]).find((name) => name && message.startsWith(name)) ?? '';
}

/**
 * Checks a form's fields, turned into the API's input, with the API's own validator (the body of the
 * operation that takes a component schema of openapi.yaml: `UserInput`, …) and words a failure as the
 * API's 400 does, and puts an action's refusal (an HttpError: a 409 duplicate, a 422) at its field with
 * the API's message: one set of rules and words for both.
 */
export function formChecker(wording: FieldWording, validator: BodyValidator) {
  /** The form's input as the schema describes it, or its errors (400) at the field they name. */
  async function check<T>(schema: string, body: unknown): Promise<{ input: T } | Refused> {
    const input = { ...(body as Record<string, unknown>) };
    delete input._csrf;
    const items = await validator.check(schema, input);
    if (!items) return { input: input as T };
    const message = describeValidationErrors(items, wording);
    return { status: 400, errors: { [fieldNamed(items, message)]: message } };
  }

  /**
   * One property of a schema checked alone, for a form that asks for part of a shape (an invitation's
   * e-mail): in the document's example body, so that only that property's errors remain.
   */
  async function checkField(schema: string, field: string, value: unknown): Promise<Refused | undefined> {
    const items = await validator.check(schema, { ...validator.example(schema), [field]: value });
    const own = items?.filter((i) => i.path === `/body/${field}` || i.path?.startsWith(`/body/${field}/`));
    if (!own?.length) return undefined;
    return { status: 400, errors: { [field]: describeValidationErrors(own, wording) } };
  }

  /**
   * Runs an action on the checked input; a refusal it throws (HttpError below 500) becomes the form's
   * error at the field `fieldOf` names for it, with the refusal's status. Anything else is thrown on.
   */
  async function act<T, R>(
    schema: string,
    body: unknown,
    action: (input: T) => Promise<R>,
    fieldOf: (refusal: HttpError) => string = () => '',
  ): Promise<{ value: R } | Refused> {
    const checked = await check<T>(schema, body);
    if (!('input' in checked)) return checked;
    return attempt(() => action(checked.input), fieldOf);
  }

  return { check, checkField, act };
}

export type FormChecker = ReturnType<typeof formChecker>;

/**
 * Runs an action; a refusal it throws (an HttpError below 500) becomes the form's error at the field
 * `fieldOf` names for it (none: the form's own), with the refusal's status. Anything else is thrown on.
 */
export async function attempt<R>(
  action: () => Promise<R>,
  fieldOf: (refusal: HttpError) => string = () => '',
): Promise<{ value: R } | Refused> {
  try {
    return { value: await action() };
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500) throw err;
    return { status: err.status, errors: { [fieldOf(err)]: err.message } };
  }
}
