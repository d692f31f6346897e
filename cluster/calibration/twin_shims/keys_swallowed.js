// Twin operator keys_swallowed: keyboard input outside text fields never reaches the app.
(() => {
  // The twin's own key listeners must not make the page look keyboard-driven to the explorer
  // (evaluator/scripts/listeners.js marks the window): the mark is restored after they are added.
  const KEYS = Symbol.for('evalgrid.keys');
  const marked = window[KEYS];
  const editable = (t) => t instanceof Element && t.matches('input, textarea, select, [contenteditable=""], [contenteditable=true]');
  const swallow = (e) => { if (!editable(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); } };
  for (const type of ['keydown', 'keypress', 'keyup']) window.addEventListener(type, swallow, true);
  if (!marked) delete window[KEYS];
})();
