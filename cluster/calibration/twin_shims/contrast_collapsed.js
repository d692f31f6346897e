// Aesthetic twin contrast_collapsed: every text is drawn in nearly its own background colour (about 1.1:1).
(() => {
  const parse = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const [r, g, b, a = 1] = parse(getComputedStyle(e).backgroundColor);
      if (a > 0.5) return [r, g, b];
    }
    return [255, 255, 255];
  };
  const near = ([r, g, b]) => {
    const light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 128;
    const shift = light ? -14 : 14;
    return `rgb(${[r, g, b].map((v) => Math.max(0, Math.min(255, v + shift))).join(',')})`;
  };
  const collapse = () => {
    for (const el of document.body ? document.body.querySelectorAll('*') : []) {
      if ([...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim()) || el.matches('input, textarea, select, button')) {
        el.style.setProperty('color', near(background(el)), 'important');
        el.style.setProperty('-webkit-text-fill-color', near(background(el)), 'important');
      }
    }
  };
  let queued = false;
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; collapse(); }); } };
  const start = () => {
    collapse();
    new MutationObserver(later).observe(document.body, { childList: true, subtree: true, characterData: true });
  };
  if (document.body) start(); else document.addEventListener('DOMContentLoaded', start);
})();
