// Twin operator keys_swallowed: keyboard input outside text fields never reaches the app.
(() => {
  const editable = (t) => t instanceof Element && t.matches('input, textarea, select, [contenteditable=""], [contenteditable=true]');
  const swallow = (e) => { if (!editable(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); } };
  for (const type of ['keydown', 'keypress', 'keyup']) window.addEventListener(type, swallow, true);
})();
