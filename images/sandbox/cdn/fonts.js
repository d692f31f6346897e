'use strict';
// Google Fonts from @fontsource packages: the families the mirror holds, the CSS fonts.googleapis.com
// would answer (generated from @fontsource's per-weight CSS), and the font files it points at, under
// fonts.gstatic.com.

const fs = require('fs');
const path = require('path');

const GSTATIC_PREFIX = 'https://fonts.gstatic.com/s/evalgrid/';

// packages (name → installed versions, ascending) → lowercased family → {family, id, pkg, weights, styles}
function fontFamilies(packages) {
  const fonts = new Map();
  for (const [name, list] of packages) {
    if (!name.startsWith('@fontsource/')) continue;
    const pkg = list[list.length - 1];
    try {
      const meta = JSON.parse(fs.readFileSync(path.join(pkg.dir, 'metadata.json'), 'utf8'));
      fonts.set(meta.family.toLowerCase(), {
        family: meta.family,
        id: name.slice('@fontsource/'.length),
        pkg,
        weights: meta.weights.map(Number),
        styles: meta.styles,
      });
    } catch {
      // a fontsource package without metadata cannot be matched to a family; it stays npm-only
    }
  }
  return fonts;
}

// css2: "Inter:wght@400;600", "Playfair Display:ital,wght@0,400;1,700", "Inter:wght@100..900".
function css2Styles(spec) {
  const [family, axesPart] = spec.split(':');
  if (!axesPart) return { family, faces: [['normal', 400]] };
  const [axesText, tuplesText = ''] = axesPart.split('@');
  const axes = axesText.split(',');
  const faces = [];
  for (const tuple of tuplesText.split(';').filter(Boolean)) {
    const values = tuple.split(',');
    const get = (axis) => (axes.indexOf(axis) >= 0 ? values[axes.indexOf(axis)] : undefined);
    const ital = get('ital');
    const wght = get('wght') || '400';
    const style = ital === '1' ? 'italic' : 'normal';
    const range = /^(\d+)\.\.(\d+)$/.exec(wght);
    faces.push(range ? [style, [+range[1], +range[2]]] : [style, Number(wght)]);
  }
  return { family, faces: faces.length ? faces : [['normal', 400]] };
}

// css (v1): "Roboto:400,700italic,300i,bold".
function css1Styles(spec) {
  const [family, variants] = spec.split(':');
  const faces = [];
  for (const raw of (variants || '').split(',').filter(Boolean)) {
    const text = raw.toLowerCase();
    const italic = /(i|italic)$/.test(text) && text !== 'i' ? true : text === 'i' || text === 'italic';
    const num = /^(\d+)/.exec(text);
    const weight = num ? +num[1] : /^b(old)?/.test(text) ? 700 : 400;
    faces.push([italic ? 'italic' : 'normal', weight]);
  }
  return { family, faces: faces.length ? faces : [['normal', 400]] };
}

function googleFonts(mirror, ctx, log) {
  let requests;
  if (ctx.path === '/css2') requests = ctx.query.getAll('family').map(css2Styles);
  else if (ctx.path === '/css') requests = ctx.query.getAll('family').flatMap((f) => f.split('|')).map(css1Styles);
  else return { miss: 'only /css and /css2 Google Fonts URLs are mirrored' };
  const display = ctx.query.get('display');
  const chunks = [];
  const served = [];
  for (const request of requests) {
    const family = request.family.replace(/\+/g, ' ').trim();
    const font = mirror.fonts.get(family.toLowerCase());
    if (!font) {
      log({ kind: 'miss', url: ctx.url, family, reason: `font family ${family} is not mirrored` });
      continue;
    }
    const lacking = (style, w) => log({ kind: 'miss', url: ctx.url, family, reason: `${family} has no ${style} ${w}` });
    chunks.push(...familyCss(font, request.faces, display, lacking));
    served.push(`${font.pkg.name}@${font.pkg.version}`);
  }
  if (!chunks.length) return { miss: 'no requested font family is mirrored' };
  return { body: chunks.join('\n'), type: 'text/css; charset=utf-8', pkg: served.join(',') };
}

// One @font-face block per face asked for (a weight range asks for every held weight in it), each
// @fontsource's own CSS with the family named as Google names it and its files under fonts.gstatic.com.
function familyCss(font, faces, display, lacking) {
  const chunks = [];
  const seen = new Set();
  for (const [style, weight] of faces) {
    const weights = Array.isArray(weight) ? font.weights.filter((w) => w >= weight[0] && w <= weight[1]) : [weight];
    for (const w of weights) {
      const key = `${w}${style === 'italic' ? '-italic' : ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      let css;
      try {
        css = fs.readFileSync(path.join(font.pkg.dir, `${key}.css`), 'utf8');
      } catch {
        lacking(style, w);
        continue;
      }
      chunks.push(css
        .replace(/font-family:\s*'[^']*'/g, `font-family: '${font.family}'`)
        .replace(/url\(\.\/files\//g, `url(${GSTATIC_PREFIX}${font.id}/files/`)
        .replace(/\s*font-display:[^;]*;/g, display ? `\n  font-display: ${display.replace(/[^a-z]/g, '')};` : ''));
    }
  }
  return chunks;
}

function gstatic(mirror, ctx) {
  if (!ctx.path.startsWith('/s/evalgrid/')) return { miss: 'not a mirrored font file' };
  const m = /^\/s\/evalgrid\/([a-z0-9-]+)\/(files\/[^/]+)$/.exec(ctx.path);
  if (!m) return { miss: 'not a mirrored font file' };
  const found = mirror.resolve('@fontsource/' + m[1], '');
  if (found.miss) return found;
  return mirror.isFile(found.pkg, m[2]) ? { file: { pkg: found.pkg, rel: m[2] }, immutable: true } : { miss: `no font file ${m[2]}` };
}

module.exports = { fontFamilies, googleFonts, gstatic };
