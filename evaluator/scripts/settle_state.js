// What still may happen on the page after an input: its layout fingerprint (layout_signature.js's, and the
// scroll position), the milliseconds until its next timer is due (Playwright's clock holds the page's timers
// and animation frames: null when none is pending, -1 when the clock is not there to ask), and the milliseconds
// until the first running finite animation or transition ends (null: none). Read-only: it calls nothing the
// page does not already have, and it is given layout_signature.js as a function (not a source to eval: in the
// page's world, eval is the page's).
(layoutSignature) => {
  const layout = [layoutSignature(), window.scrollX, window.scrollY].join('|');
  let timerMs = -1;
  try {
    const clock = globalThis.__pwClock && globalThis.__pwClock.controller;
    if (clock && typeof clock._firstTimer === 'function' && typeof clock.performanceNow === 'function') {
      const now = clock.performanceNow();
      const first = clock._firstTimer();
      timerMs = first ? Math.max(0, first.callAt - now) : null;
    }
  } catch (e) {
    timerMs = -1;
  }
  let animationMs = null;
  try {
    for (const a of document.getAnimations()) {
      const t = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
      if (a.playState !== 'running' || !t || !Number.isFinite(t.endTime) || t.localTime === null) continue;
      // a reversed animation ends at its start: what is left of it is its local time
      const rate = a.playbackRate || 1, left = rate < 0 ? t.localTime / -rate : (t.endTime - t.localTime) / rate;
      animationMs = animationMs === null ? Math.max(0, left) : Math.min(animationMs, Math.max(0, left));
    }
  } catch (e) {
    animationMs = null;
  }
  return { layout, timerMs, animationMs };
}
