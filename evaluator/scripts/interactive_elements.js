// Visible interactive elements with what an agent needs to act on them.
// Argument: the source of css_path.js.
(cssPathSource) => {
  const cssPath = eval(cssPathSource);
  const selector = 'button, a[href], input:not([type=hidden]), select, textarea, summary, [role=button], ' +
    '[role=tab], [role=checkbox], [role=switch], [role=menuitem], [role=link], [onclick], [tabindex]:not([tabindex="-1"]), label[for]';
  const vw = innerWidth, vh = innerHeight;
  const out = [];
  const seen = new Set();
  // Elements made clickable by script (divs with listeners): found by the listener itself (marked by
  // listeners.js, so a page without CSS still has them) or by the cursor:pointer that usually announces
  // it. A listener on a container most of the screen wide (a framework's root, delegating every event)
  // is not a control.
  const CLICK = Symbol.for('evalgrid.click');
  const scripted = (el) => el[CLICK] === true || getComputedStyle(el).cursor === 'pointer';
  const pointer = [];
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  for (let i = 0; i < all.length && i < 6000; i++) {
    const el = all[i];
    if (!scripted(el)) continue;
    // The outermost pointer subtree is the control; a listener-only element (no pointer cursor) that
    // delegates for pointer children (a board, a list) leaves them the controls.
    const parent = el.parentElement;
    if (parent && parent !== document.body && getComputedStyle(parent).cursor === 'pointer') continue;
    if (getComputedStyle(el).cursor !== 'pointer' &&
        Array.from(el.children).some((c) => getComputedStyle(c).cursor === 'pointer')) continue;
    if (el.closest(selector) || el.querySelector(selector)) continue;
    const box = el.getBoundingClientRect();
    if (el[CLICK] === true && box.width * box.height > 0.25 * innerWidth * innerHeight) continue;
    pointer.push(el);
  }
  const candidates = Array.from(document.querySelectorAll(selector)).concat(pointer)
    .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) ? -1 : 1);
  for (let el of candidates) {
    if (seen.has(el)) continue;
    seen.add(el);
    // A checkbox or radio that is not rendered at all (display:none, styled through its label): its
    // visible label is the control a person clicks.
    const box = el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio');
    if (box && el.getClientRects().length === 0) {
      const label = el.closest('label') || (el.labels && el.labels[0]);
      if (!label || seen.has(label) || label.getClientRects().length === 0) continue;
      seen.add(label);
      el = label;
    }
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    // A custom checkbox hides its native input (tiny or transparent) but keeps it rendered.
    const hiddenInput = el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio') &&
      (r.width < 2 || r.height < 2 || st.opacity === '0');
    if (!hiddenInput && (r.width < 2 || r.height < 2 || st.visibility === 'hidden' || st.display === 'none' ||
        Number(st.opacity) < 0.05)) continue;
    if (el.closest('[aria-hidden=true], [inert]')) continue;
    const label = (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder ||
                   el.getAttribute('title') || el.getAttribute('alt') || '').trim().replace(/\s+/g, ' ').slice(0, 80);
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    out.push({
      selector: cssPath(el), tag: el.tagName.toLowerCase(), role: el.getAttribute('role') || '',
      type: (el.getAttribute('type') || '').toLowerCase(), label, href: el.getAttribute('href') || '',
      disabled: !!el.disabled || el.getAttribute('aria-disabled') === 'true',
      x: cx + scrollX, y: cy + scrollY, width: r.width, height: r.height,
      in_viewport: cx >= 0 && cy >= 0 && cx <= vw && cy <= vh * 2.5,
      form: el.form ? cssPath(el.form) : '',
      min: el.getAttribute('min') || '', max: el.getAttribute('max') || '',
      options: el.tagName === 'SELECT' ? Array.from(el.options).map((o) => o.value).slice(0, 20) : [],
    });
  }
  return out;
}
