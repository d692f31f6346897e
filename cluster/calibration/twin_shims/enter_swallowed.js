// Twin operator enter_swallowed: text entry does nothing. Enter in a text field never reaches the app,
// and no form is ever submitted (by Enter or by its submit button).
(() => {
  // The twin's own key listeners capture on the window: the explorer does not count those as the page being
  // driven by keys (evaluator/browser/isolated.py), so the twin does not look keyboard-driven where its
  // original does not.
  const editable = (t) => t instanceof Element && t.matches('input, textarea, [contenteditable=""], [contenteditable=true]');
  const swallow = (e) => {
    if (e.key === 'Enter' && editable(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); }
  };
  for (const type of ['keydown', 'keypress', 'keyup']) window.addEventListener(type, swallow, true);
  window.addEventListener('submit', (e) => { e.stopImmediatePropagation(); e.preventDefault(); }, true);
  const click = (e) => {
    const t = e.target instanceof Element && e.target.closest('button, input[type=submit], input[type=image]');
    if (t && t.form && (t.type === 'submit' || t.type === 'image')) { e.stopImmediatePropagation(); e.preventDefault(); }
  };
  window.addEventListener('click', click, true);
})();
