// Aesthetic twin css_removed: every author stylesheet is switched off, including those added later
// (a framework's injected styles, the Tailwind Play CDN's generated sheet). Styles a script sets on
// elements stay, as they would in a page whose CSS failed to load.
(() => {
  const off = () => {
    for (const el of document.querySelectorAll('style, link[rel~=stylesheet]')) {
      if (el.media !== 'not all') el.media = 'not all';
    }
    if (document.adoptedStyleSheets && document.adoptedStyleSheets.length) document.adoptedStyleSheets = [];
  };
  new MutationObserver(off).observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener('DOMContentLoaded', off);
  off();
})();
