// Whether the page is driven by keys pressed anywhere on it: a keyboard listener on the window, the
// document or the body (read through CDP: isolated.py's `marks`), a canvas of some size, or text that tells
// the player to use the keyboard.
(marks) => {
  if (marks.keys) return 'listener';
  for (const target of [document, document.documentElement, document.body]) {
    if (target && (marks.kinds.get(target) || '').split(' ').includes('keys')) return 'listener';
  }
  for (const c of document.querySelectorAll('canvas')) {
    const r = c.getBoundingClientRect();
    if (r.width >= 120 && r.height >= 120) return 'canvas';
  }
  const text = document.body ? document.body.innerText.slice(0, 5000) : '';
  // (not "press Enter": that is how a field is submitted, not a page driven by keys)
  if (/\b(arrow keys?|WASD|spacebar|press space|any key)\b|方向键/i.test(text)) {
    return 'text';
  }
  return '';
}
