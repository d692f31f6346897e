// What an action may have changed, beyond the state fingerprint: the markup alone (field values left out,
// so a field that only cleared is not counted as an effect of submitting it), the number of list items
// and rows, and the visible text outside fields (to see whether typed text appeared elsewhere).
// Argument: the selector of the control acted on, or null. For a control smaller than a sixth of the screen
// (not a board or a canvas, whose own content is the app's output) `outside` is the markup fingerprint with
// the control's own attributes left out (its text kept) and `own` its box: a click that only marks the control
// itself (pressed, selected, focused) changed nothing outside it; nor did focus bookkeeping (tabindex,
// aria-selected) anywhere. `values` fingerprints the form values outside that control (a native slider's own
// value is the hand's input, not the app's output; a result field the app fills is output).
(own) => {
  const b = document.body;
  const hash = (s) => {
    let h1 = 0x811c9dc5, h2 = 0;
    for (let i = 0; i < s.length; i++) {
      h1 = Math.imul(h1 ^ s.charCodeAt(i), 16777619) >>> 0;
      h2 = (h2 * 31 + s.charCodeAt(i)) >>> 0;
    }
    return h1.toString(16) + h2.toString(16) + ':' + s.length;
  };
  // React mirrors a controlled field's value into its value attribute: strip it, or typing would count.
  let html = '', outside = null, box = null, values = null;
  if (b) {
    const clone = b.cloneNode(true);
    for (const field of clone.querySelectorAll('input[value], textarea')) {
      field.removeAttribute('value');
      if (field.tagName === 'TEXTAREA') field.textContent = '';
    }
    html = clone.innerHTML;  // not the URL: a form that reloads the page with its query string did nothing
    const control = own ? document.querySelector(own) : null;
    const r = control ? control.getBoundingClientRect() : null;
    if (control && b.contains(control) && r.width * r.height < innerWidth * innerHeight / 6) {
      // the same element in the clone, by its path of child indices from the body
      const path = [];
      for (let e = control; e !== b; e = e.parentElement) path.unshift(Array.prototype.indexOf.call(e.parentElement.children, e));
      let twin = clone;
      for (const i of path) twin = twin && twin.children[i];
      if (twin) {
        for (const e of [twin, ...twin.querySelectorAll('*')]) {
          for (const name of e.getAttributeNames()) e.removeAttribute(name);
        }
        // Focus bookkeeping moves between controls wherever the click lands (a roving tabindex, the selected
        // header of a tab list): it is the widget following the pointer, not the app's output.
        for (const e of clone.querySelectorAll('[tabindex], [aria-selected]')) {
          e.removeAttribute('tabindex');
          e.removeAttribute('aria-selected');
        }
        outside = hash(clone.innerHTML);
        box = { x: r.left, y: r.top, width: r.width, height: r.height };
        values = hash(Array.from(document.querySelectorAll('input, textarea, select')).filter((e) => e !== control)
          .map((e) => (e.type === 'checkbox' || e.type === 'radio') ? String(e.checked) : String(e.value))
          .join('\u0001'));
      }
    }
  }
  const items = b ? b.querySelectorAll('li, tr, [role=listitem], [role=row], [role=option]').length : 0;
  return { markup: hash(html), outside, own: box, values, items, url: location.href,
           text: b ? b.innerText.slice(0, 20000) : '' };
}
