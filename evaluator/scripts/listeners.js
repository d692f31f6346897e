// Which inputs the page listens for, recorded as it registers its listeners (an init script, before the
// app's code). The explorer needs two facts no markup shows:
// - elements made clickable by a script's listener (a div with addEventListener('click')), which CSS
//   may not announce with cursor:pointer, so that an app with no stylesheet still has its controls;
// - keyboard listeners on the window, the document or the body: a game, a slideshow or an editor
//   driven by keys pressed anywhere on the page, not in a field.
// - elements that listen for a double click (an item edited in place): the explorer double-clicks them;
// - elements that listen for a press (mousedown, pointerdown): a canvas drawn on or played with, not a
//   chart that only shows tooltips.
// Marks are symbol-keyed properties (Symbol.for), read by interactive_elements.js and keyboard_driven.js.
(() => {
  const CLICK = Symbol.for('evalgrid.click');
  const DBLCLICK = Symbol.for('evalgrid.dblclick');
  const PRESS = Symbol.for('evalgrid.press');
  const KEYS = Symbol.for('evalgrid.keys');
  const clicky = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart']);
  const pressy = new Set(['mousedown', 'pointerdown']);
  const keys = new Set(['keydown', 'keyup', 'keypress']);
  const original = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
    try {
      if (keys.has(type) && (this === window || this === document || this === document.documentElement ||
                             this === document.body)) {
        window[KEYS] = true;
      } else if (this instanceof Element && this !== document.documentElement && this !== document.body) {
        if (clicky.has(type)) this[CLICK] = true;
        if (pressy.has(type)) this[PRESS] = true;
        if (type === 'dblclick') this[DBLCLICK] = true;
      }
    } catch (e) { /* a page may have replaced window or document: the mark is a hint, never required */ }
    return original.call(this, type, listener, options);
  };
})();
