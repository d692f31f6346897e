// Twin operator checkbox_dead: a checkbox cannot be toggled (its click, and its label's, is cancelled).
(() => {
  // The twin's own key listeners capture on the window: the explorer does not count those as the page being
  // driven by keys (evaluator/browser/isolated.py), so the twin does not look keyboard-driven where its
  // original does not.
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
})();
