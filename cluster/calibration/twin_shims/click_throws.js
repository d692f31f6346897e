// Twin operator click_throws: a button's click handler throws before it does anything.
(() => {
  window.addEventListener('click', (e) => {
    const t = e.target instanceof Element && e.target.closest('button, [role=button], input[type=button]');
    if (!t || (t.form && t.type === 'submit')) return;
    e.stopImmediatePropagation();
    throw new TypeError("Cannot read properties of undefined (reading 'id')");
  }, true);
})();
