// Twin operator delete_noop: a delete or remove control does nothing when used.
(() => {
  const words = /delete|remove|trash|discard|\u00d7|\u2715|\u2716|\u{1F5D1}|\u5220\u9664|\u79fb\u9664/iu;
  const named = (el) => [el.getAttribute('aria-label'), el.getAttribute('title'), el.getAttribute('class'),
                         el.getAttribute('name'), el.getAttribute('data-action'), (el.textContent || '').trim().slice(0, 40)]
    .some((v) => v && words.test(v));
  const deleter = (t) => {
    for (let el = t instanceof Element ? t : null, depth = 0; el && depth < 4; el = el.parentElement, depth++) {
      if (el.matches('li, tr, article, section, form, body, [role=listitem], [role=row]')) return null;
      if (el.matches('button, a, [role=button], [onclick], input[type=button], svg') && named(el)) return el;
    }
    return null;
  };
  const cancel = (e) => { if (deleter(e.target)) { e.stopImmediatePropagation(); e.preventDefault(); } };
  for (const type of ['click', 'pointerdown', 'pointerup', 'mousedown', 'mouseup']) window.addEventListener(type, cancel, true);
})();
