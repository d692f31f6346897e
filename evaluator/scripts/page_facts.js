// Measurements for the heuristic judge: overflow, broken images, contrast, author styling, and the layout,
// type and colour facts its design qualities are measured from (evaluator/evidence/design.py).
// Argument: the source of css_path.js.
(cssPathSource) => {
  const cssPath = eval(cssPathSource);
  const d = document.documentElement, b = document.body;
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const st = getComputedStyle(e);
      if (st.backgroundImage && st.backgroundImage !== 'none') return null;  // gradient or image: unknown
      const c = parse(st.backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const lowContrast = [];
  let textElements = 0;
  // Whether the text is dressed is decided where the text is, by characters: a styled widget on a page whose
  // body kept the defaults is styled, and a page whose stylesheet styles only its body is not much more.
  const SERIF = /^("?Times New Roman"?|Times|serif|"?Liberation Serif"?|"?DejaVu Serif"?)$/i;
  let chars = 0, serifChars = 0, plainChars = 0;
  for (const el of (b ? b.querySelectorAll('*') : [])) {
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'svg'].includes(el.tagName)) continue;
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim().length > 1);
    if (!own) continue;
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    if (r.width < 1 || r.height < 1 || st.visibility === 'hidden' || Number(st.opacity) < 0.1) continue;
    textElements++;
    const fg = parse(st.color), bg = background(el);
    const count = Array.from(el.childNodes).reduce((n, c) => n + (c.nodeType === 3 ? c.textContent.trim().length : 0), 0);
    chars += count;
    if (SERIF.test(st.fontFamily.trim())) serifChars += count;
    if (fg && bg && fg.r + fg.g + fg.b === 0 && bg.r + bg.g + bg.b === 765) plainChars += count;
    if (!fg || !bg) continue;
    const [l1, l2] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
    const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
    if (ratio < need) lowContrast.push({ selector: cssPath(el), text: el.textContent.trim().slice(0, 60),
                                         ratio: Math.round(ratio * 100) / 100, required: need });
  }
  const broken = Array.from(document.images).filter((i) => i.complete && i.naturalWidth === 0 && i.getAttribute('src'))
    .map((i) => ({ selector: cssPath(i), src: i.getAttribute('src').slice(0, 200) }));
  let cssRules = 0;
  for (const sheet of document.styleSheets) { try { cssRules += sheet.cssRules.length; } catch (e) { cssRules += 1; } }
  const styled = document.querySelectorAll('[style]').length;
  const bodyStyle = b ? getComputedStyle(b) : null;
  // Is the page dressed by its author, or in the browser's defaults? Decided from computed styles (what a
  // reader sees), not from counting rules or style attributes: a script's inline width on a bar does not
  // make a page designed, and a stylesheet that failed to load leaves the defaults showing.
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const links = Array.from(document.querySelectorAll('a[href]')).filter(visible).slice(0, 50);
  const buttons = Array.from(document.querySelectorAll('button, input[type=button], input[type=submit]'))
    .filter(visible).slice(0, 50);
  const pageBg = b ? background(b) : null;
  const most = (list, test) => list.filter(test).length * 2 >= list.length;
  const defaults = bodyStyle ? {
    font: chars ? serifChars * 2 > chars : SERIF.test(bodyStyle.fontFamily.trim()),
    margin: bodyStyle.margin === '8px' && bodyStyle.padding === '0px',
    colors: chars ? plainChars * 2 > chars
      : bodyStyle.color === 'rgb(0, 0, 0)' && !!pageBg && pageBg.r === 255 && pageBg.g === 255 && pageBg.b === 255,
    // most, not all: a script that highlights the active tab with an inline style does not design a page
    links: links.length ? most(links, (a) => ['rgb(0, 0, 238)', 'rgb(85, 26, 139)'].includes(getComputedStyle(a).color)
                                        && getComputedStyle(a).textDecorationLine === 'underline') : null,
    buttons: buttons.length ? most(buttons, (e) => {
      const st = getComputedStyle(e);
      return st.backgroundColor === 'rgb(239, 239, 239)' && st.borderTopStyle === 'outset';
    }) : null,
  } : null;
  // Design facts, raw and capped (the judge measures them; see evaluator/evidence/design.py for the meaning).
  // text: one row per visible element with its own text, in document order:
  //   [left, top, width, height, font px, weight, align l|c|r, 1 if laid out as a box (not inline), chars, family]
  // The box is the element's border box: with the text-align it gives the edge the text lines up on (a
  // button's or a card's visible edge is its box, not its glyphs).
  // family indexes `families`. spacing: computed vertical margins, paddings and gaps (px -> count); horizontal
  // margins are left out because `margin: auto` centring computes to arbitrary px. colors: painted colour ->
  // weight (px² of background, of glyphs, of borders).
  const design = (() => {
    const text = [], families = [], spacing = {}, colors = {};
    const addColor = (value, weight) => {
      const c = parse(value);
      if (!c || c.a < 0.5 || !(weight > 0)) return;
      const key = `${c.r},${c.g},${c.b}`;
      colors[key] = (colors[key] || 0) + weight;
    };
    const addSpace = (value) => {
      const px = Math.round(parseFloat(value) * 10) / 10;
      if (px > 0) spacing[px] = (spacing[px] || 0) + 1;
    };
    let scanned = 0;
    for (const el of (b ? [b, ...b.querySelectorAll('*')] : [])) {
      if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD'].includes(el.tagName)) continue;
      if (++scanned > 1500) break;  // a huge DOM: the first screens decide the impression anyway
      const r = el.getBoundingClientRect();
      const st = getComputedStyle(el);
      if (r.width < 1 || r.height < 1 || st.visibility === 'hidden' || Number(st.opacity) < 0.1) continue;
      addColor(st.backgroundColor, r.width * r.height);
      for (const side of ['Top', 'Right', 'Bottom', 'Left']) {
        const width = parseFloat(st[`border${side}Width`]);
        if (width > 0 && st[`border${side}Style`] !== 'none') {
          addColor(st[`border${side}Color`], width * (side === 'Top' || side === 'Bottom' ? r.width : r.height));
        }
      }
      for (const prop of ['marginTop', 'marginBottom', 'paddingTop', 'paddingBottom', 'paddingLeft', 'paddingRight'])
        addSpace(st[prop]);
      if (/flex|grid/.test(st.display)) { addSpace(st.rowGap); addSpace(st.columnGap); }
      const chars = Array.from(el.childNodes).filter((n) => n.nodeType === 3)
        .reduce((sum, n) => sum + n.textContent.trim().length, 0);
      if (chars < 2 || text.length >= 200) continue;
      const size = parseFloat(st.fontSize);
      addColor(st.color, chars * size * size * 0.5);
      const family = st.fontFamily.split(',')[0].trim().replace(/^["']|["']$/g, '').toLowerCase();
      const generic = st.fontFamily.split(',').pop().trim().toLowerCase();
      const name = generic === 'monospace' ? 'monospace' : family;  // code text is not a second typeface
      if (!families.includes(name)) families.push(name);
      const align = /center/.test(st.textAlign) ? 'c' : /right|end/.test(st.textAlign) ? 'r' : 'l';
      const round = (v) => Math.round(v * 10) / 10;
      text.push([round(r.left), round(r.top + scrollY), round(r.width), round(r.height), size,
                 Number(st.fontWeight) || 400, align, st.display === 'inline' ? 0 : 1, chars, families.indexOf(name)]);
    }
    const top = (map, n) => Object.fromEntries(Object.entries(map).sort((x, y) => y[1] - x[1]).slice(0, n)
      .map(([k, v]) => [k, Math.round(v)]));
    return { text, families, spacing: top(spacing, 40), colors: top(colors, 60),
             viewport: [innerWidth, innerHeight] };
  })();
  // What open shadow roots render (web components) is the page's content as much as the light DOM's: their
  // elements and visible text count, and a canvas there covers the screen as one outside would.
  const shadow = (() => {
    let elements = 0, chars = 0, budget = 5000;
    const canvases = Array.from(document.querySelectorAll('canvas'));
    const walk = (root, depth) => {
      if (depth > 8) return;
      for (const el of root.querySelectorAll('*')) {
        if (--budget < 0) break;  // a huge DOM: the rest of it is not walked for shadow roots
        if (!el.shadowRoot) continue;
        const inner = el.shadowRoot;
        elements += inner.querySelectorAll('*').length;
        canvases.push(...inner.querySelectorAll('canvas'));
        const texts = document.createTreeWalker(inner, NodeFilter.SHOW_TEXT);
        for (let n = texts.nextNode(); n; n = texts.nextNode()) {
          const parent = n.parentElement;
          if (parent && !['STYLE', 'SCRIPT', 'TEMPLATE'].includes(parent.tagName)) chars += n.textContent.trim().length;
        }
        walk(inner, depth + 1);
      }
    };
    walk(document, 0);
    const screen = innerWidth * innerHeight;
    let covered = 0;
    for (const c of canvases) {
      const r = c.getBoundingClientRect(), st = getComputedStyle(c);
      if (st.visibility === 'hidden' || Number(st.opacity) < 0.1) continue;
      const w = Math.min(r.right, innerWidth) - Math.max(r.left, 0), h = Math.min(r.bottom, innerHeight) - Math.max(r.top, 0);
      if (w > 0 && h > 0) covered += w * h;
    }
    return { elements, chars, canvas: screen ? Math.min(1, Math.round(covered / screen * 1000) / 1000) : 0 };
  })();
  // Text a reader cannot make out at all: below 1.5:1 (the collapsed-contrast failure, not a pale caption).
  const illegible = lowContrast.filter((e) => e.ratio < 1.5).length;
  return {
    viewport_width: innerWidth, scroll_width: d ? d.scrollWidth : 0, overflow_x: d ? d.scrollWidth - innerWidth : 0,
    broken_images: broken, low_contrast: lowContrast.slice(0, 20), low_contrast_count: lowContrast.length,
    text_elements: textElements, css_rules: cssRules, inline_styled_elements: styled, defaults,
    illegible_count: illegible, design,
    font_family: bodyStyle ? bodyStyle.fontFamily : '', element_count: document.getElementsByTagName('*').length + shadow.elements,
    text_length: (b ? b.innerText.trim().length : 0) + shadow.chars, canvas_share: shadow.canvas, title: document.title, lang: d ? d.lang : '',
    has_viewport_meta: !!document.querySelector('meta[name=viewport]'),
    text_sample: b ? b.innerText.trim().replace(/\s+/g, ' ').slice(0, 2000) : '',
  };
}
