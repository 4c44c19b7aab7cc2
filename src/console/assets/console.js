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
