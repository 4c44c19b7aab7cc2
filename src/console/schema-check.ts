import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { HttpError } from '../core/errors.js';
import type { FieldWording } from '../core/error-wording-types.js';
import { openApiDocument } from '../platform/http/openapi-document.js';
import { describeValidationErrors } from '../platform/http/validation-messages.js';

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

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** Ajv's error as express-openapi-validator reports it, so that describeValidationErrors words it alike. */
function asValidatorItem(error: ErrorObject) {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const property = params.missingProperty ?? params.additionalProperty;
  return {
    path: `/body${error.instancePath}${property === undefined ? '' : `/${property}`}`,
    message: error.message,
    errorCode: `${error.keyword}.openapi.validation`,
  };
}

/**
 * Checks a form's fields against a component schema of openapi.yaml (`UserInput`, …) and words a
 * failure as the API's 400 does, and puts an action's refusal (an HttpError: a 409 duplicate, a 422)
 * at its field with the API's message: one set of rules and words for both.
 */
export function formChecker(wording: FieldWording) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(openApiDocument(), 'doc');
  const validatorOf = (schema: string) => ajv.getSchema(`doc#/components/schemas/${schema}`)!;

  /** The form's input as the schema describes it, or its errors (400) at the field they name. */
  function check<T>(schema: string, body: unknown): { input: T } | Refused {
    const input = { ...(body as Record<string, unknown>) };
    delete input._csrf;
    const validate = validatorOf(schema);
    if (validate(input)) return { input: input as T };
    const items = (validate.errors ?? []).map(asValidatorItem);
    const message = describeValidationErrors(items, wording);
    const field = items.map((i) => i.path.split('/')[2]).find((name) => name && message.startsWith(name)) ?? '';
    return { status: 400, errors: { [field]: message } };
  }

  /** One property of a schema checked alone, for a form that asks for part of a shape (an invitation's e-mail). */
  function checkField(schema: string, field: string, value: unknown): Refused | undefined {
    const validate = validatorOf(`${schema}/properties/${field}`);
    if (validate(value)) return undefined;
    const items = (validate.errors ?? []).map((e) =>
      asValidatorItem({ ...e, instancePath: `/${field}${e.instancePath}` }),
    );
    return { status: 400, errors: { [field]: describeValidationErrors(items, wording) } };
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
    const checked = check<T>(schema, body);
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
