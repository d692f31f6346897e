// Resolve when the finite running animations end (hover transitions), or after the limit.
(limitMs) => {
  const finite = document.getAnimations().filter((a) => {
    const t = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
    return a.playState === 'running' && t && Number.isFinite(t.endTime);
  });
  if (!finite.length) return true;
  return Promise.race([Promise.all(finite.map((a) => a.finished.catch(() => null))),
                       new Promise((r) => setTimeout(r, limitMs))]).then(() => true);
}
