import { useCsrf } from './render.js';
import type { FieldErrors } from './schema-check.js';

/** The session's synchronizer token: every state-changing form carries it (csrf.ts checks it). */
export function CsrfField() {
  return <input type="hidden" name="_csrf" value={useCsrf() ?? ''} />;
}

interface FieldProps {
  /** The form's name, so that two forms of a page have distinct ids. */
  form: string;
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'datetime-local';
  value?: string;
  errors?: FieldErrors;
  autocomplete?: string;
}

/** A labelled field; its error, when it has one, is shown under it and tied to it for assistive technology. */
export function Field({ form, name, label, type = 'text', value, errors, autocomplete }: FieldProps) {
  const id = `${form}-${name}`;
  const error = errors?.[name];
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        // Preact types each input type with its own roles; the union of these few is one of them.
        type={type as 'text'}
        value={value}
        autocomplete={autocomplete}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error && (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** The error of a form that belongs to none of its fields. */
export function FormError({ errors }: { errors?: FieldErrors }) {
  const error = errors?.[''];
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A form's submitted values as text, to fill its fields again when it is refused. */
export function formValues(body: unknown): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>))
    if (typeof value === 'string' && name !== '_csrf') values[name] = value;
  return values;
}
