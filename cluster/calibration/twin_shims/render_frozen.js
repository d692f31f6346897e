// Twin operator render_frozen: the state changes but the page does not re-render. After the first user
// input, changes to the document's children, text, attributes, classes and inline styles are dropped
// (field values still change: the browser, not the app, draws them).
(() => {
  // The twin's own key listeners capture on the window: the explorer does not count those as the page being
  // driven by keys (evaluator/browser/isolated.py), so the twin does not look keyboard-driven where its
  // original does not.
  let frozen = false;
  const freeze = () => { frozen = true; };
  for (const type of ['pointerdown', 'keydown']) window.addEventListener(type, freeze, true);
  const guard = (proto, name, result) => {
    const original = proto[name];
    if (typeof original !== 'function') return;
    proto[name] = function guarded(...args) { return frozen ? result(this, args) : original.apply(this, args); };
  };
  guard(Node.prototype, 'appendChild', (self, [child]) => child);
  guard(Node.prototype, 'insertBefore', (self, [child]) => child);
  guard(Node.prototype, 'removeChild', (self, [child]) => child);
  guard(Node.prototype, 'replaceChild', (self, [, old]) => old);
  for (const name of ['append', 'prepend', 'replaceChildren', 'remove', 'before', 'after', 'replaceWith',
                      'insertAdjacentElement', 'insertAdjacentHTML', 'insertAdjacentText']) {
    guard(Element.prototype, name, () => undefined);
    guard(CharacterData.prototype, name, () => undefined);
  }
  const setter = (proto, name) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d || !d.set || !d.configurable) return;
    Object.defineProperty(proto, name, { ...d, set(v) { if (!frozen) d.set.call(this, v); } });
  };
  // Attributes and classes too (a tab shown by `hidden`, an item struck through by a class), and the
  // inline styles apps toggle to show and hide things.
  for (const name of ['setAttribute', 'removeAttribute', 'toggleAttribute', 'setAttributeNS', 'removeAttributeNS']) {
    guard(Element.prototype, name, () => undefined);
  }
  for (const name of ['add', 'remove', 'toggle', 'replace']) guard(DOMTokenList.prototype, name, () => false);
  guard(CSSStyleDeclaration.prototype, 'setProperty', () => undefined);
  guard(CSSStyleDeclaration.prototype, 'removeProperty', () => '');
  setter(Element.prototype, 'className');
  setter(HTMLElement.prototype, 'hidden');
  setter(HTMLElement.prototype, 'title');
  // Style properties (el.style.display = ...) are named properties, not accessors, in Chromium: an
  // element's style object is handed out behind a proxy that drops writes once frozen.
  const proxies = new WeakMap();
  for (const proto of [HTMLElement.prototype, SVGElement.prototype]) {
    const d = Object.getOwnPropertyDescriptor(proto, 'style');
    if (!d || !d.get || !d.configurable) continue;
    Object.defineProperty(proto, 'style', { ...d, get() {
      const style = d.get.call(this);
      if (!proxies.has(style)) {
        proxies.set(style, new Proxy(style, {
          get: (target, prop) => { const v = target[prop]; return typeof v === 'function' ? v.bind(target) : v; },
          set: (target, prop, value) => { if (!frozen) target[prop] = value; return true; },
        }));
      }
      return proxies.get(style);
    } });
  }
  setter(Element.prototype, 'innerHTML');
  setter(Element.prototype, 'outerHTML');
  setter(HTMLElement.prototype, 'innerText');
  setter(HTMLElement.prototype, 'outerText');
  setter(Node.prototype, 'textContent');
  setter(Node.prototype, 'nodeValue');
  setter(CharacterData.prototype, 'data');
})();
