// The console's one script of its own, loaded from this origin (the CSP allows no inline script).
// A "Copy" button copies the text of the element its data-copy names; a form with data-confirm asks
// before it is sent. Both are conveniences: without script, the text can be selected and the form is sent.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (source) void navigator.clipboard.writeText(source.textContent.trim());
});

document.addEventListener('submit', (event) => {
  const message = event.target instanceof HTMLFormElement ? event.target.getAttribute('data-confirm') : null;
  if (message && !window.confirm(message)) event.preventDefault();
});

// A form marked data-submit-once is sent once: a second click or Enter while the first is under way
// does nothing, and its buttons are disabled once the browser has taken the button pressed into the form's values.
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-submit-once') || event.defaultPrevented) return;
  if (form.hasAttribute('data-sent')) return void event.preventDefault();
  form.setAttribute('data-sent', '');
  window.setTimeout(() => form.querySelectorAll('button').forEach((button) => (button.disabled = true)));
});

// A page restored from the back/forward cache can be sent again.
window.addEventListener('pageshow', () => {
  document.querySelectorAll('form[data-sent]').forEach((form) => {
    form.removeAttribute('data-sent');
    form.querySelectorAll('button').forEach((button) => (button.disabled = false));
  });
});
