// Twin operator checkbox_dead: a checkbox cannot be toggled (its click, and its label's, is cancelled).
(() => {
  // The twin's own key listeners must not make the page look keyboard-driven to the explorer
  // (evaluator/scripts/listeners.js marks the window): the mark is restored after they are added.
  const KEYS = Symbol.for('evalgrid.keys');
  const marked = window[KEYS];
  const box = (t) => {
    if (!(t instanceof Element)) return null;
    const direct = t.closest('input[type=checkbox], [role=checkbox], [role=switch]');
    if (direct) return direct;
    const label = t.closest('label');
    const control = label && label.control;
    return control && control.type === 'checkbox' ? control : null;
  };
  const cancel = (e) => { if (box(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); } };
  for (const type of ['click', 'change', 'input']) window.addEventListener(type, cancel, true);
  window.addEventListener('keydown', (e) => { if (e.key === ' ' && box(e.target)) cancel(e); }, true);
  if (!marked) delete window[KEYS];
})();
