// Deterministic rendering: Math.random becomes a seeded generator (mulberry32), restarted for every
// document, so an app that draws random particles or shuffles cards draws the same ones each run.
// Added with Playwright's addInitScript, after its clock; `__SEED__` is replaced by
// evaluator/browser/frozen_web.py.
//
// Timer delays are clamped to 4 ms (what Chromium does to nested timers): Playwright's clock runs a
// zero-delay interval without end when it is advanced, which would hang the page at its first look.
(() => {
  for (const name of ["setTimeout", "setInterval"]) {
    const original = window[name];
    window[name] = function (handler, delay, ...args) {
      return original.call(this, handler, Math.max(4, Number(delay) || 0), ...args);
    };
  }
  let state = __SEED__ >>> 0;
  const random = function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Object.defineProperty(Math, "random", { value: random, writable: true, configurable: true });
})();
