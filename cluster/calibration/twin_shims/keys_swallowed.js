// Twin operator keys_swallowed: keyboard input outside text fields never reaches the app.
(() => {
  // The twin's own key listeners capture on the window: the explorer does not count those as the page being
  // driven by keys (evaluator/browser/isolated.py), so the twin does not look keyboard-driven where its
  // original does not.
  const editable = (t) => t instanceof Element && t.matches('input, textarea, select, [contenteditable=""], [contenteditable=true]');
  const swallow = (e) => { if (!editable(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); } };
  for (const type of ['keydown', 'keypress', 'keyup']) window.addEventListener(type, swallow, true);
})();
