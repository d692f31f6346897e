// What an action may have changed, beyond the state fingerprint: the markup alone (field values left out,
// so a field that only cleared is not counted as an effect of submitting it), the number of list items
// and rows, and the visible text outside fields (to see whether typed text appeared elsewhere).
() => {
  const b = document.body;
  // React mirrors a controlled field's value into its value attribute: strip it, or typing would count.
  let html = '';
  if (b) {
    const clone = b.cloneNode(true);
    for (const field of clone.querySelectorAll('input[value], textarea')) {
      field.removeAttribute('value');
      if (field.tagName === 'TEXTAREA') field.textContent = '';
    }
    html = clone.innerHTML;
  }
  const s = html;  // not the URL: a form that reloads the page with its query string did nothing
  let h1 = 0x811c9dc5, h2 = 0;
  for (let i = 0; i < s.length; i++) {
    h1 = Math.imul(h1 ^ s.charCodeAt(i), 16777619) >>> 0;
    h2 = (h2 * 31 + s.charCodeAt(i)) >>> 0;
  }
  const items = b ? b.querySelectorAll('li, tr, [role=listitem], [role=row], [role=option]').length : 0;
  return { markup: h1.toString(16) + h2.toString(16) + ':' + s.length, items, url: location.href,
           text: b ? b.innerText.slice(0, 20000) : '' };
}
