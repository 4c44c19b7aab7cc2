// The console's one script of its own, loaded from this origin (the CSP allows no inline script).
// A "Copy" button copies the text of the element its data-copy names: without script, the text can be selected.
// Actions that need confirming have a confirmation page of their own, which works without script.
// The part a page focuses (its `autofocus`: an action's outcome, the question after "Publish") is
// focused and scrolled into view by the browser itself.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (source) void navigator.clipboard.writeText(source.textContent.trim());
});

// A form marked data-submit-once is sent once: a second click or Enter while the first is under way
// does nothing, and its buttons are disabled once the browser has taken the button pressed into the form's values.
// (htmx's hx-disabled-elt does this only for requests htmx makes; these forms are the browser's own posts.)
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

// Times are written in UTC to the second (time.tsx): each <time datetime> is shown in the viewer's
// time zone, its UTC kept on hover (title). On load, and in every part htmx swaps in.
const localTime = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'long',
});
function showLocalTimes(root) {
  root.querySelectorAll('time[datetime]').forEach((time) => {
    const at = new Date(time.dateTime);
    if (!Number.isNaN(at.getTime())) time.textContent = localTime.format(at);
  });
}
showLocalTimes(document);
document.addEventListener('htmx:load', (event) => event.target instanceof Element && showLocalTimes(event.target));
