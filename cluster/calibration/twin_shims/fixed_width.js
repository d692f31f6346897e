// Aesthetic twin fixed_width: the layout is forced to a fixed 1400 px width, whatever the screen.
(() => {
  const style = document.createElement('style');
  style.textContent = 'html, body { width: 1400px !important; min-width: 1400px !important; max-width: none !important; }';
  const add = () => { (document.head || document.documentElement).appendChild(style); };
  if (document.head) add(); else document.addEventListener('DOMContentLoaded', add);
})();
