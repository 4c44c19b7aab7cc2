import type { ComponentChildren } from 'preact';
import { CsrfField } from './form.js';
import { Layout } from './layout.js';

interface ConfirmProps {
  /** The question, as the page's title ("Revoke key irk_abc…?"). */
  title: string;
  /** Where the page sits (a breadcrumb), above what the action does. */
  context?: ComponentChildren;
  /** What the action does, in a sentence or two. */
  children: ComponentChildren;
  action: string;
  /** The button that acts, named as the button that led here. */
  button: string;
  /** The page to go back to without acting. */
  cancel: string;
}

/**
 * A confirmation before an action that cannot be undone: a page of its own (a GET), so it works
 * without script; its form carries the CSRF token and posts the action, "Cancel" goes back.
 */
export function ConfirmPage({ title, context, children, action, button, cancel }: ConfirmProps) {
  return (
    <Layout title={title}>
      {context}
      {children}
      <form method="post" action={action}>
        <CsrfField />
        <button type="submit">{button}</button>
      </form>
      <p>
        <a href={cancel}>Cancel</a>
      </p>
    </Layout>
  );
}
