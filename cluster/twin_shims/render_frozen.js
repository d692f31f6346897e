// Twin operator render_frozen: the state changes but the page does not re-render. After the first user
// input, changes to the document's children and text are dropped (attributes and field values still change).
(() => {
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
    if (!d || !d.set) return;
    Object.defineProperty(proto, name, { ...d, set(v) { if (!frozen) d.set.call(this, v); } });
  };
  setter(Element.prototype, 'innerHTML');
  setter(Element.prototype, 'outerHTML');
  setter(HTMLElement.prototype, 'innerText');
  setter(HTMLElement.prototype, 'outerText');
  setter(Node.prototype, 'textContent');
  setter(Node.prototype, 'nodeValue');
  setter(CharacterData.prototype, 'data');
})();
