// Visible interactive elements with what an agent needs to act on them.
// Arguments: the source of css_path.js, and the listener marks evalgrid read through CDP (isolated.py's `marks`).
(cssPathSource, marks) => {
  const cssPath = eval(cssPathSource);
  const selector = 'button, a[href], input:not([type=hidden]), select, textarea, summary, [role=button], ' +
    '[role=tab], [role=checkbox], [role=switch], [role=menuitem], [role=link], [role=slider], [onclick], ' +
    '[tabindex]:not([tabindex="-1"]), label[for]';
  const vw = innerWidth, vh = innerHeight;
  const out = [];
  const seen = new Set();
  // Elements made clickable by script (divs with listeners): found by the listener itself (read through CDP,
  // so a page without CSS still has them) or by the cursor:pointer that usually announces it. A listener on a
  // container most of the screen wide (a framework's root, delegating every event) is not a control.
  const listens = (el, kind) => (marks.kinds.get(el) || '').split(' ').includes(kind);
  const doubled = (el) => listens(el, 'dblclick');
  // What a field asks for, in the words a person reads beside it: its labels, name, placeholder and title, or
  // else the text just before it ("Loan amount" in the table cell before the field's, a "$" before it).
  const fieldHint = (el) => {
    if (!['INPUT', 'TEXTAREA'].includes(el.tagName)) return '';
    let text = [...(el.labels || [])].map((l) => l.innerText)
      .concat([el.getAttribute('aria-label'), el.placeholder, el.name, el.id, el.title])
      .filter(Boolean).join(' ');
    for (let node = el, hops = 0; node && !text.trim() && hops < 3; hops++, node = node.parentElement) {
      const before = node.previousSibling;
      text = before ? (before.nodeType === 3 ? before.textContent : before.innerText || '') : '';
    }
    return (text || '').replace(/\s+/g, ' ').trim().toLowerCase().slice(0, 160);
  };

  const scripted = (el) => listens(el, 'click') || doubled(el) || getComputedStyle(el).cursor === 'pointer';
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
    // (an item edited by a double click may hold its own checkbox and delete button: it stays a control)
    if (el.tagName === 'CANVAS' || (!doubled(el) && (el.closest(selector) || el.querySelector(selector)))) continue;
    const box = el.getBoundingClientRect();
    if ((listens(el, 'click') || doubled(el)) && getComputedStyle(el).cursor !== 'pointer' &&
        box.width * box.height > 0.25 * innerWidth * innerHeight) continue;
    pointer.push(el);
  }
  // A canvas is a control when it listens for presses (drawing, a board game) or its cursor says so; a chart
  // (tooltips on hover, at most a click) is not.
  const canvases = Array.from(document.querySelectorAll('canvas')).filter((c) => {
    const r = c.getBoundingClientRect();
    const cursor = getComputedStyle(c).cursor;
    return r.width >= 60 && r.height >= 60 && (listens(c, 'press') || cursor === 'crosshair' || cursor === 'pointer');
  });
  // A surface that follows the pointer (a heatmap, a trail that follows the mouse): a large element that listens
  // for pointer movement and holds no control, which a person moves the mouse across with no button held. A
  // container that listens for keys too delegates every event (a framework's root); a canvas is left to the rule
  // above (a chart's canvas listens for movement for its tooltips, and is no control).
  const surfaces = [];
  for (let i = 0; i < all.length && i < 6000 && surfaces.length < 3; i++) {
    const el = all[i];
    if (el.tagName === 'CANVAS' || !listens(el, 'move') || listens(el, 'keys')) continue;
    const r = el.getBoundingClientRect();
    if (r.width * r.height >= 0.25 * vw * vh && !el.querySelector(selector) && !el.closest(selector)) surfaces.push(el);
  }
  // Controls hidden until their row is hovered (a delete button shown by `.row:hover .delete`): found through
  // the style sheets' :hover rules whose hovered part is an ancestor of the control. Revealed by a script's
  // mouseenter, they stay unseen.
  let hoverRules = null;
  const hoverSelectors = () => {
    if (hoverRules) return hoverRules;
    hoverRules = [];
    const walk = (rules) => {
      for (const rule of rules) {
        if (rule.selectorText && rule.selectorText.includes(':hover')) {
          for (const one of rule.selectorText.split(',')) if (one.includes(':hover')) hoverRules.push(one.trim());
        }
        if (rule.cssRules) walk(rule.cssRules);
      }
    };
    for (const sheet of Array.from(document.styleSheets)) {
      try { walk(sheet.cssRules); } catch (e) { /* a cross-origin sheet cannot be read */ }
    }
    return hoverRules;
  };
  const revealer = (el) => {
    for (const rule of hoverSelectors()) {
      const at = rule.lastIndexOf(':hover');
      if (!/^\s*[>\s]/.test(rule.slice(at + 6)) || /^\s*$/.test(rule.slice(at + 6))) continue;  // hovered: an ancestor
      const whole = rule.replace(/:hover/g, ''), hovered = rule.slice(0, at).replace(/:hover/g, '');
      try {
        for (let node = el, depth = 0; node && depth < 4; node = node.parentElement, depth++) {
          if (!node.matches(whole)) continue;
          const row = node.parentElement && node.parentElement.closest(hovered);
          if (row && row.getClientRects().length > 0) return row;
        }
      } catch (e) { /* a selector that means nothing once :hover is stripped */ }
    }
    return null;
  };
  // What a control belongs to: its list item or row, else the nearest ancestor that holds more than it (the
  // thing a delete button deletes).
  const DELETE = /delete|remove|trash|discard|destroy|[\u00d7\u2715\u2716\u2717\u274c]|\u{1F5D1}|\u5220\u9664|\u79fb\u9664/iu;
  const deletes = (el) => [el.getAttribute('aria-label'), el.getAttribute('title'), el.getAttribute('class'),
                           el.getAttribute('name'), el.getAttribute('data-action'),
                           (el.textContent || '').trim().slice(0, 40)].some((v) => v && DELETE.test(v));
  // One of a group of options of which one is current (filters, tabs, radios): choosing the current one
  // rightly changes nothing.
  const current = (e) => !!e && (e.getAttribute('aria-pressed') === 'true' || e.getAttribute('aria-selected') === 'true' ||
    (e.hasAttribute('aria-current') && e.getAttribute('aria-current') !== 'false') ||
    (e.type === 'radio' && e.checked) ||
    /(^|[\s_-])(selected|active|current)($|[\s_-])/i.test(e.getAttribute('class') || ''));
  const choice = (el) => {
    for (let box = el.parentElement, depth = 0; box && box !== document.body && depth < 2;
         box = box.parentElement, depth++) {
      const peers = Array.from(box.querySelectorAll(el.tagName)).filter((p) => p.type === el.type);
      if (peers.length < 2 || peers.length > 8) continue;
      if (peers.some((p) => current(p) || (p.parentElement !== box && current(p.parentElement)))) return true;
    }
    return false;
  };
  const itemOf = (el, intent) => {
    const item = el.closest('li, tr, [role=listitem], [role=row]');
    if (item || intent !== 'delete') return item;
    const own = (el.innerText || '').trim().length;
    for (let node = el.parentElement, depth = 0; node && node !== document.body && depth < 3;
         node = node.parentElement, depth++) {
      if ((node.innerText || '').trim().length > own) return node;
    }
    return null;
  };
  // Items a person drags (cards of a board, rows of a sortable list): marked draggable, shown with a grab or
  // move cursor, or held in a container that listens for presses or drags beside items like them. Each gets
  // where it would be dropped: another container like its own (a board's next column), else the end of its
  // own list. Libraries that listen on the document alone (and show no cursor) are not seen.
  const grabs = (el) => ['move', 'grab', '-webkit-grab'].includes(getComputedStyle(el).cursor);
  const dropFor = new Map();
  const draggables = [];
  for (let i = 0; i < all.length && i < 6000 && draggables.length < 40; i++) {
    const el = all[i];
    const box = el.parentElement;
    if (!box || box === document.body || ['SCRIPT', 'STYLE', 'OPTION'].includes(el.tagName)) continue;
    const marked = el.getAttribute('draggable') === 'true' || (grabs(el) && !grabs(box));
    // (the listeners first: counting an item's peers on every element of a long list is the costly part)
    const held = (listens(box, 'press') || listens(box, 'drag') || listens(el, 'drag')) &&
      Array.from(box.children).filter((c) => c.tagName === el.tagName && c.className === el.className).length >= 2;
    if (!marked && !held) continue;
    if (el.closest('[draggable=true]') !== el && el.closest('[draggable=true]')) continue;  // inside a dragged item
    const r = el.getBoundingClientRect();
    if (r.width < 8 || r.height < 8) continue;
    draggables.push(el);
  }
  const twins = (box) => Array.from(document.getElementsByTagName(box.tagName)).filter((o) => o !== box &&
    o.className === box.className && !o.contains(box) && !box.contains(o) && o.getClientRects().length > 0);
  for (const el of draggables) {
    const box = el.parentElement;
    const other = twins(box)[0];
    dropFor.set(el, other ? {drop: cssPath(other), within: false} : {drop: cssPath(box), within: true});
  }
  // A slider widget's thumb: a small element on a wide flat track (jQuery UI's handle, Ion's; a labelled bar a
  // quarter of its track's width at most, Dragdealer's), or one whose role says slider. A person drags it along
  // the track; a click on it does nothing, rightly. A track carries no words of its own besides the thumb's (value
  // labels at most): a list item or a card with a handle is an item to drag, not a track.
  const track = (el) => {
    const own = el.innerText || '';
    for (let node = el.parentElement, depth = 0; node && depth < 3; node = node.parentElement, depth++) {
      const t = node.getBoundingClientRect();
      if (t.width >= 100 && t.height <= 60 && t.width >= 3 * t.height) {
        return /\p{L}/u.test((node.innerText || '').replace(own, '')) ? null : node;
      }
    }
    return null;
  };
  const thumb = (el) => {
    if (el.getAttribute('role') === 'slider') return true;
    // (the class first: a layout read for every element of the page, every step, is what it spares)
    // (a word of the class, or the end of a camel-case one: `leftGrip`, not `thumbnail`)
    const cls = el.getAttribute('class') || '';
    if (!/(^|[\s_-])(handle|thumb|knob|grip)($|[\s_-])/i.test(cls) && !/[a-z](Handle|Thumb|Knob|Grip)($|[\s_-])/.test(cls)) {
      return false;
    }
    const r = el.getBoundingClientRect();
    if (r.height > 48 || r.width < 6 || r.height < 6) return false;
    const t = track(el);
    return !!t && r.width <= Math.max(48, t.getBoundingClientRect().width / 4);
  };
  const thumbs = [];
  for (let i = 0; i < all.length && i < 6000 && thumbs.length < 20; i++) {
    if (thumb(all[i]) && !all[i].matches(selector)) thumbs.push(all[i]);
  }
  const candidates = Array.from(document.querySelectorAll(selector))
    .concat(pointer, canvases, surfaces, draggables, thumbs)
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
    // A label whose own control is shown is that control a second time.
    if (el.tagName === 'LABEL' && el.control && el.control.getClientRects().length > 0) continue;
    let r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    // A custom checkbox hides its native input (tiny or transparent) but keeps it rendered.
    const hiddenInput = el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio') &&
      (r.width < 2 || r.height < 2 || st.opacity === '0');
    const hidden = r.width < 2 || r.height < 2 || st.visibility === 'hidden' || st.display === 'none' ||
      Number(st.opacity) < 0.05;
    const row = !hiddenInput && hidden ? revealer(el) : null;
    if (!hiddenInput && hidden && !row) continue;
    if (row) r = row.getBoundingClientRect();  // where the pointer goes first: the row that reveals it
    if (el.closest('[aria-hidden=true], [inert]')) continue;
    const intent = el.tagName === 'CANVAS' ? '' : surfaces.includes(el) ? 'surface' : thumb(el) ? 'slider' :
      deletes(el) ? 'delete' : choice(el) ? 'choice' : '';
    const item = itemOf(el, intent);
    const label = (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder ||
                   el.getAttribute('title') || el.getAttribute('alt') || '').trim().replace(/\s+/g, ' ').slice(0, 80);
    // The same control on every item: its place in the item, and its label without the words of the item's
    // other text ("Remove Milk" in Milk's row reads "Remove"). An item that is nothing but the control (a
    // menu's link) keeps the whole label: each link is its own.
    let shape = '';
    if (item && item !== el && item.contains(el)) {
      const rest = (item.innerText || '').replace(el.innerText || '', ' ').toLowerCase();
      const without = (text) => {
        const words = new Set(text.split(/[^\p{L}\p{N}]+/u).filter(Boolean));
        return label.split(/\s+/).filter((w) => !words.has(w.toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''))).join(' ');
      };
      // (a label all of whose words show in the item, beside a badge that repeats it: the item's name is its
      // longest line)
      const longest = rest.split('\n').map((t) => t.trim()).sort((a, b) => b.length - a.length)[0] || '';
      const own = !rest.trim() ? label : without(rest) || without(longest);
      const place = [];
      for (let node = el; node && node !== item; node = node.parentElement) place.unshift(node.tagName.toLowerCase());
      const where = cssPath(item).replace(/:nth-of-type\(\d+\)$/, '');
      shape = `${where} >> ${place.join(' > ')} | ${own}`;
    } else if (dropFor.has(el)) {
      // the items of one list are dragged alike: one stands for the rest
      shape = `${cssPath(el.parentElement)} >> ${el.tagName.toLowerCase()} | dragged`;
    }
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    out.push({
      selector: cssPath(el), tag: el.tagName.toLowerCase(), role: el.getAttribute('role') || '',
      type: (el.getAttribute('type') || '').toLowerCase(), label, href: el.getAttribute('href') || '',
      // (a wizard's steps not reached yet sit in an item marked disabled, and are not links to follow)
      disabled: !!el.disabled || !!el.closest('[aria-disabled=true], fieldset:disabled'),
      x: cx + scrollX, y: cy + scrollY, width: r.width, height: r.height,
      in_viewport: cx >= 0 && cy >= 0 && cx <= vw && cy <= vh * 2.5,
      form: el.form ? cssPath(el.form) : '',
      min: el.getAttribute('min') || '', max: el.getAttribute('max') || '',
      step: el.getAttribute('step') || '', inputmode: (el.getAttribute('inputmode') || '').toLowerCase(),
      pattern: (el.getAttribute('pattern') || '').slice(0, 80), hint: fieldHint(el),
      value: ['INPUT', 'TEXTAREA'].includes(el.tagName) && !['checkbox', 'radio', 'password'].includes(el.type)
        ? String(el.value || '').slice(0, 80) : '',
      drop: dropFor.has(el) ? dropFor.get(el).drop : '', drop_within: dropFor.has(el) && dropFor.get(el).within,
      clickable: !dropFor.has(el) || el.matches(selector) || pointer.includes(el) || el.tagName === 'CANVAS',
      options: el.tagName === 'SELECT' ? Array.from(el.options).map((o) => o.value).slice(0, 20) : [],
      intent, item: item ? cssPath(item) : '', shape, reveal: row ? cssPath(row) : '', dblclick: doubled(el),
    });
  }
  return out;
}
