'use strict';
// Offline CDN mirror for the sandbox's Chromium (run with --proxy-server=http://127.0.0.1:PORT and
// --ignore-certificate-errors). Model answers load libraries from unpkg, jsDelivr, cdnjs, the
// Tailwind Play CDN, Google Fonts and friends; the sandbox has no network, so this proxy answers
// those URLs the way the real CDN would, from npm packages installed at build time
// (npm-tree.sh), and refuses every other host. Every answer is logged so the evidence shows
// which libraries a page got and which it did not.
//
// Node 18, CommonJS, no dependencies: the image has node but no npm.
//
//   node mirror.js --port P --root DIR --cert C --key K --index F --log L   (prints "ready" when listening)
//   node mirror.js --build-index DIR [NAME...] > F   the index: packages, and CommonJS export names (image build)
//
// The mirror never runs package code. esm.sh-style ES modules are bundled with esbuild, which only parses;
// the named exports of a CommonJS entry come from the index, made once at image build by loading each
// entry in a throwaway process (a static lexer finds 0 of lodash's 308 names). It runs as a process of
// its own, beside the supervisor, never inside it.

const fs = require('fs');
const http = require('http');
const path = require('path');
const stream = require('stream');
const tls = require('tls');

// ---------------------------------------------------------------------------------------------
// semver: the subset npm ranges in CDN URLs use (exact, partial, x-ranges, ^, ~, comparators,
// hyphen ranges, ||). Prereleases never satisfy a range; the mirror holds none anyway.

const VERSION_RE = /^[=v]*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function parseVersion(text) {
  const m = VERSION_RE.exec(String(text).trim());
  if (!m) return null;
  return { major: +m[1], minor: +m[2], patch: +m[3], pre: m[4] ? m[4].split('.') : [] };
}

function compareVersions(a, b) {
  for (const key of ['major', 'minor', 'patch']) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  if (!a.pre.length || !b.pre.length) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    if (a.pre[i] === undefined) return -1;
    if (b.pre[i] === undefined) return 1;
    if (a.pre[i] === b.pre[i]) continue;
    const an = /^\d+$/.test(a.pre[i]);
    const bn = /^\d+$/.test(b.pre[i]);
    if (an && bn) return +a.pre[i] < +b.pre[i] ? -1 : 1;
    if (an !== bn) return an ? -1 : 1;
    return a.pre[i] < b.pre[i] ? -1 : 1;
  }
  return 0;
}

const v = (major, minor, patch) => ({ major, minor, patch, pre: [] });

// "18" / "18.2" / "18.x" / "*" → the numbers given (null where wild), or undefined if not a partial.
function parsePartial(text) {
  const m = /^[=v]*(\d+|[xX*])?(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?$/.exec(text);
  if (!m) return undefined;
  const num = (s) => (s === undefined || /^[xX*]$/.test(s) ? null : +s);
  const parts = [num(m[1]), num(m[2]), num(m[3])];
  for (let i = 1; i < 3; i++) if (parts[i - 1] === null) parts[i] = null;
  return parts;
}

// Comparators [op, version] for one space-separated term.
function termComparators(op, text) {
  const p = parsePartial(text);
  if (p === undefined) return null;
  const [M, m, pt] = p;
  if (M === null) return op === '<' || op === '>' ? [['<', v(0, 0, 0)]] : [];
  const lo = v(M, m === null ? 0 : m, pt === null ? 0 : pt);
  const nextUp = m === null ? v(M + 1, 0, 0) : pt === null ? v(M, m + 1, 0) : null;
  switch (op) {
    case '^': {
      const hi = M > 0 || m === null ? v(M + 1, 0, 0) : m > 0 || pt === null ? v(0, m + 1, 0) : v(0, 0, pt + 1);
      return [['>=', lo], ['<', hi]];
    }
    case '~':
      return [['>=', lo], ['<', m === null ? v(M + 1, 0, 0) : v(M, m + 1, 0)]];
    case '>=':
      return [['>=', lo]];
    case '>':
      return nextUp ? [['>=', nextUp]] : [['>', lo]];
    case '<':
      return [['<', lo]];
    case '<=':
      return nextUp ? [['<', nextUp]] : [['<=', lo]];
    default:
      return nextUp ? [['>=', lo], ['<', nextUp]] : [['=', lo]];
  }
}

// A range → list of comparator sets (OR of ANDs), or null when it is not a range we understand.
function parseRange(range) {
  const text = String(range).trim();
  if (text === '' || text === 'latest') return [[]];
  const sets = [];
  for (const alt of text.split('||')) {
    let part = alt.trim();
    const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(part);
    if (hyphen) part = `>=${hyphen[1]} <=${hyphen[2]}`;
    const set = [];
    const tokens = part.replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    for (const token of tokens) {
      const m = /^(>=|<=|>|<|=|\^|~>?|)(.*)$/.exec(token);
      const comparators = termComparators(m[1].replace('~>', '~'), m[2]);
      if (comparators === null) return null;
      set.push(...comparators);
    }
    sets.push(set);
  }
  return sets;
}

function satisfies(version, sets) {
  if (version.pre.length) return false;
  return sets.some((set) =>
    set.every(([op, bound]) => {
      const c = compareVersions(version, bound);
      return op === '>=' ? c >= 0 : op === '>' ? c > 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : c === 0;
    }),
  );
}

function isExactVersion(range) {
  return parseVersion(range) !== null;
}

// ---------------------------------------------------------------------------------------------
// The installed packages, indexed by each package.json's own name and version (aliases such as
// node_modules/react--17 are folder names only).

class Mirror {
  // `index`: the image build's index (buildIndex), whose CommonJS export names the ES-module path uses.
  constructor(root, index = null) {
    this.root = root;
    this.cjsIndex = new Map(Object.entries((index && index.cjs_exports) || {}));
    this.packages = new Map(); // name → [{version, parsed, dir, json}] ascending
    this.fileLists = new Map(); // dir → relative file paths
    this.fonts = new Map(); // lowercased family → {family, id, dir, version, weights, styles}
    this._scan(path.join(root, 'node_modules'), 0);
    for (const list of this.packages.values()) list.sort((a, b) => compareVersions(a.parsed, b.parsed));
    this._indexFonts();
  }

  _scan(dir, depth) {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        this._scan(full, depth);
        continue;
      }
      this._addPackage(full);
      if (depth < 8) this._scan(path.join(full, 'node_modules'), depth + 1);
    }
  }

  _addPackage(dir) {
    let json;
    try {
      json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    } catch {
      return;
    }
    const parsed = typeof json.name === 'string' ? parseVersion(json.version) : null;
    if (!parsed) return;
    const list = this.packages.get(json.name) || [];
    if (list.some((p) => p.version === json.version)) return;
    list.push({ name: json.name, version: json.version, parsed, dir, json });
    this.packages.set(json.name, list);
  }

  _indexFonts() {
    for (const [name, list] of this.packages) {
      if (!name.startsWith('@fontsource/')) continue;
      const pkg = list[list.length - 1];
      try {
        const meta = JSON.parse(fs.readFileSync(path.join(pkg.dir, 'metadata.json'), 'utf8'));
        this.fonts.set(meta.family.toLowerCase(), {
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
  }

  // → {pkg} | {miss: reason}
  resolve(name, range) {
    const list = this.packages.get(name);
    if (!list) return { miss: `package ${name} is not mirrored` };
    const wanted = range === undefined ? '' : range;
    if (isExactVersion(wanted)) {
      const exact = parseVersion(wanted);
      const pkg = list.find((p) => compareVersions(p.parsed, exact) === 0);
      if (pkg) return { pkg };
      // A pinned patch release we do not hold: the newest one of the same major line (minor, for 0.x)
      // keeps the page working, as the model meant it to; the log says what was substituted. (A page
      // that pins the file with an integrity hash still refuses it: that is then on the record too.)
      const line = (p) => p.parsed.major === exact.major && (exact.major !== 0 || p.parsed.minor === exact.minor);
      const near = list.filter(line).pop();
      return near ? { pkg: near, note: `substituted ${near.version} for ${wanted}` }
        : { miss: `${name}@${wanted} is not mirrored (have ${list.map((p) => p.version).join(', ')})` };
    }
    const sets = parseRange(wanted);
    if (!sets) return { miss: `version range ${JSON.stringify(wanted)} not understood` };
    for (let i = list.length - 1; i >= 0; i--) if (satisfies(list[i].parsed, sets)) return { pkg: list[i] };
    return { miss: `no mirrored ${name} satisfies ${wanted} (have ${list.map((p) => p.version).join(', ')})` };
  }

  files(dir) {
    let list = this.fileLists.get(dir);
    if (list) return list;
    list = [];
    const walk = (sub) => {
      let entries;
      try {
        entries = fs.readdirSync(path.join(dir, sub), { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const rel = sub ? `${sub}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (e.name !== 'node_modules') walk(rel);
        } else if (e.isFile()) list.push(rel);
      }
    };
    walk('');
    this.fileLists.set(dir, list);
    return list;
  }

  // The named exports of a CommonJS module file, as the index recorded them (none for a file it lacks).
  cjsExports(file) {
    return this.cjsIndex.get(path.relative(this.root, file)) || [];
  }

  isFile(pkg, rel) {
    const full = safeJoin(pkg.dir, rel);
    if (!full) return false;
    try {
      return fs.statSync(full).isFile();
    } catch {
      return false;
    }
  }
}

// A package-relative path joined under dir, or null if it would leave it.
function safeJoin(dir, rel) {
  if (typeof rel !== 'string' || rel.includes('\0')) return null;
  const clean = path.posix.normalize('/' + rel).slice(1);
  if (clean.split('/').includes('..')) return null;
  const full = path.join(dir, clean);
  return full === dir || full.startsWith(dir + path.sep) ? full : null;
}

const stripDotSlash = (p) => p.replace(/^(\.\/)+/, '').replace(/^\/+/, '');

// ---------------------------------------------------------------------------------------------
// Answers. A handler returns one of:
//   {file: {pkg, rel}, immutable}   serve a package file
//   {redirect: location, pkg}        302, like unpkg for ranges and default files
//   {body, type, pkg?, note?}        generated content (Google Fonts CSS)
//   {miss: reason}                   404

const TYPES = {
  '.js': 'application/javascript; charset=utf-8',
  '.mjs': 'application/javascript; charset=utf-8',
  '.cjs': 'application/javascript; charset=utf-8',
  '.jsx': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.scss': 'text/plain; charset=utf-8',
  '.less': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const contentType = (rel) => TYPES[path.extname(rel).toLowerCase()] || 'text/plain; charset=utf-8';

// "/@scope/name@range/rest" → {name, range, rest}; range undefined when absent.
function parseSpec(p) {
  const m = /^\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]*))?(\/.*)?$/.exec(p);
  if (!m) return null;
  return { name: m[1], range: m[2], rest: m[3] || '' };
}

// The file a bare package URL serves: unpkg reads `unpkg`, jsDelivr `jsdelivr`, both then a string
// `browser`, then `main`.
function defaultFile(mirror, pkg, field) {
  const json = pkg.json;
  for (const candidate of [json[field], json.browser, json.main, 'index.js']) {
    if (typeof candidate !== 'string' || !candidate) continue;
    const found = resolveModulePath(mirror, pkg, stripDotSlash(candidate));
    if (found) return found;
  }
  return null;
}

// Node-style resolution unpkg applies to a requested path: as is, +.js, +.json, dir/index.js.
function resolveModulePath(mirror, pkg, rel) {
  if (rel && mirror.isFile(pkg, rel)) return rel;
  for (const ext of ['.js', '.json']) if (rel && mirror.isFile(pkg, rel + ext)) return rel + ext;
  const index = rel ? `${rel.replace(/\/$/, '')}/index.js` : 'index.js';
  return mirror.isFile(pkg, index) ? index : null;
}

// jsDelivr and cdnjs minify on request: "x.min.js" is served from "x.js" when only that exists.
function unminifiedName(rel) {
  const m = /^(.*)\.min\.(js|css|mjs)$/.exec(rel);
  return m ? `${m[1]}.${m[2]}` : null;
}

function npmCdn(mirror, ctx, prefix, field) {
  const spec = parseSpec(ctx.path.slice(prefix.length));
  if (!spec) return { miss: 'not a package URL' };
  const found = mirror.resolve(spec.name, spec.range);
  if (found.miss) return found;
  const pkg = found.pkg;
  const base = `${ctx.origin}${prefix}/${pkg.name}@${pkg.version}`;
  const rel = stripDotSlash(spec.rest);
  if (spec.range === undefined || !isExactVersion(spec.range) || found.note) {
    return { redirect: base + (spec.rest || '') + ctx.search, pkg, note: found.note };
  }
  if (!rel) {
    const def = defaultFile(mirror, pkg, field);
    return def ? { redirect: `${base}/${def}${ctx.search}`, pkg } : { miss: `${pkg.name}@${pkg.version} has no default file` };
  }
  if (mirror.isFile(pkg, rel)) return { file: { pkg, rel }, immutable: true };
  if (field === 'jsdelivr') {
    const plain = unminifiedName(rel);
    if (plain && mirror.isFile(pkg, plain)) return { file: { pkg, rel: plain }, immutable: true };
    return { miss: `${pkg.name}@${pkg.version} has no file ${rel}` };
  }
  const resolved = resolveModulePath(mirror, pkg, rel);
  if (resolved) return { redirect: `${base}/${resolved}${ctx.search}`, pkg };
  return { miss: `${pkg.name}@${pkg.version} has no file ${rel}` };
}

function unpkg(mirror, ctx) {
  if (ctx.query.has('meta')) return { miss: 'unpkg ?meta listings are not mirrored' };
  return npmCdn(mirror, ctx, '', 'unpkg');
}

function jsdelivr(mirror, ctx) {
  if (!ctx.path.startsWith('/npm/')) return { miss: 'only /npm/ jsDelivr URLs are mirrored' };
  if (/\/\+esm$/.test(ctx.path)) return jsdelivrEsm(mirror, ctx);
  return npmCdn(mirror, ctx, '/npm', 'jsdelivr');
}

// cdnjs library names and version spellings differ from npm's.
const CDNJS = {
  'three.js': { name: 'three', version: (ver) => ver.replace(/^r(\d+)$/, '0.$1.0') },
  'Chart.js': { name: 'chart.js' },
  'chart.js': { name: 'chart.js' },
  'font-awesome': { name: (ver) => (parseInt(ver, 10) >= 5 ? '@fortawesome/fontawesome-free' : 'font-awesome') },
  'animejs': { name: 'animejs' },
  'gsap': { name: 'gsap' },
  'jquery': { name: 'jquery' },
  'react': { name: 'react' },
  'react-dom': { name: 'react-dom' },
  'vue': { name: 'vue' },
  'd3': { name: 'd3' },
  'lodash.js': { name: 'lodash' },
  'bootstrap': { name: 'bootstrap' },
  'twitter-bootstrap': { name: 'bootstrap' },
  'tailwindcss': { name: 'tailwindcss' },
  'babel-standalone': { name: '@babel/standalone' },
  'alpinejs': { name: 'alpinejs' },
  'marked': { name: 'marked' },
  'dayjs': { name: 'dayjs' },
  'axios': { name: 'axios' },
  'lucide': { name: 'lucide' },
  'htmx': { name: 'htmx.org' },
  'popper.js': { name: (ver) => (parseInt(ver, 10) >= 2 ? '@popperjs/core' : 'popper.js') },
  'moment.js': { name: 'moment' },
};

const CDNJS_DIRS = ['dist/', 'build/', 'umd/', 'lib/'];

// cdnjs flattens npm layouts: "three.min.js" is npm's build/three.min.js. Exact path first, then
// the file whose path ends with the requested one (ranked by the usual build directories), then
// the same for the unminified name.
function findFlattened(mirror, pkg, rel) {
  if (mirror.isFile(pkg, rel)) return rel;
  const files = mirror.files(pkg.dir);
  const rank = (f) => {
    const i = CDNJS_DIRS.findIndex((d) => f.startsWith(d));
    return (i < 0 ? CDNJS_DIRS.length : i) * 10000 + f.length;
  };
  for (const wanted of [rel, unminifiedName(rel), path.posix.basename(rel)]) {
    if (!wanted) continue;
    const hits = files.filter((f) => f === wanted || f.endsWith('/' + wanted)).sort((a, b) => rank(a) - rank(b));
    if (hits.length === 1 || (hits.length > 1 && rank(hits[0]) !== rank(hits[1]))) return hits[0];
    if (hits.length > 1) return null;
  }
  return null;
}

function cdnjs(mirror, ctx) {
  const m = /^\/ajax\/libs\/([^/]+)\/([^/]+)\/(.+)$/.exec(ctx.path);
  if (!m) return { miss: 'not a cdnjs library URL' };
  const entry = Object.hasOwn(CDNJS, m[1]) ? CDNJS[m[1]] : undefined;
  if (!entry) return { miss: `cdnjs library ${m[1]} is not mirrored` };
  const version = entry.version ? entry.version(m[2]) : m[2];
  const name = typeof entry.name === 'function' ? entry.name(version) : entry.name;
  if (!isExactVersion(version)) return { miss: `cdnjs version ${m[2]} is not exact` };
  const found = mirror.resolve(name, version);
  if (found.miss) return found;
  const rel = findFlattened(mirror, found.pkg, m[3]);
  return rel ? { file: { pkg: found.pkg, rel }, immutable: true, note: found.note }
    : { miss: `${name}@${version} has no file matching ${m[3]}` };
}

// The Play CDN script is the tailwindcss-cdn package, a copy of what cdn.tailwindcss.com served:
// its root holds the newest build, subdirectories older ones, each with plugin variants.
const TAILWIND_PLUGINS = ['forms', 'typography', 'aspect-ratio', 'container-queries', 'line-clamp'];

function tailwindPlay(mirror, ctx) {
  const found = mirror.resolve('tailwindcss-cdn', '');
  if (found.miss) return found;
  const pkg = found.pkg;
  const wanted = ctx.path.replace(/^\/+|\/+$/g, '');
  let dir = '';
  let note;
  if (wanted && wanted !== pkg.version) {
    if (!isExactVersion(wanted) && parseRange(wanted) === null) return { miss: `not a Tailwind Play CDN URL` };
    const held = [pkg.version, ...mirror.files(pkg.dir).filter((f) => /^\d+\.\d+\.\d+\/tailwindcss\.js$/.test(f)).map((f) => f.split('/')[0])];
    const versions = held.map(parseVersion).sort(compareVersions);
    const exact = parseVersion(wanted);
    const sets = exact ? null : parseRange(wanted);
    let pick = exact
      ? versions.find((x) => compareVersions(x, exact) === 0)
      : versions.filter((x) => satisfies(x, sets)).pop();
    if (!pick && exact && exact.major === 3) {
      // The Play CDN is v3-only; a v3 build we do not hold is closer to the nearest one we do than
      // to nothing (a page without Tailwind renders unstyled), so serve that and say so.
      pick = versions.filter((x) => compareVersions(x, exact) <= 0).pop() || versions[0];
      note = `substituted ${fmt(pick)} for ${wanted}`;
    }
    if (!pick) return { miss: `Tailwind Play CDN ${wanted} is not mirrored` };
    if (fmt(pick) !== pkg.version) dir = fmt(pick) + '/';
  }
  const plugins = (ctx.query.get('plugins') || '').split(',').map((s) => s.trim().replace(/@.*$/, '')).filter(Boolean);
  let variant = 'tailwindcss.js';
  if (plugins.length === 1 && TAILWIND_PLUGINS.includes(plugins[0])) variant = `tailwindcss-with-${plugins[0]}.js`;
  else if (plugins.length) variant = 'tailwindcss-with-all-plugins.js';
  if (!mirror.isFile(pkg, dir + variant)) variant = 'tailwindcss-with-all-plugins.js';
  return { file: { pkg, rel: dir + variant }, immutable: false, note };
}

const fmt = (x) => `${x.major}.${x.minor}.${x.patch}`;

// Other hosts models use, each a fixed mapping onto an npm package's file.
function d3js(mirror, ctx) {
  const m = /^\/d3\.v(\d+)(\.min)?\.js$/.exec(ctx.path);
  if (!m) return { miss: 'not a d3js.org bundle URL' };
  const found = mirror.resolve('d3', m[1]);
  if (found.miss) return found;
  return { file: { pkg: found.pkg, rel: `dist/d3${m[2] || ''}.js` }, immutable: false };
}

function codeJquery(mirror, ctx) {
  const m = /^\/jquery-(\d+\.\d+\.\d+)((?:\.slim)?(?:\.min)?)\.js$/.exec(ctx.path);
  if (!m) return { miss: 'not a code.jquery.com core URL' };
  return packageFile(mirror, 'jquery', m[1], `dist/jquery${m[2]}.js`);
}

function bootstrapCdn(mirror, ctx) {
  const m = /^\/(bootstrap|font-awesome)\/(\d+\.\d+\.\d+)\/(.+)$/.exec(ctx.path);
  if (!m) return { miss: 'not a BootstrapCDN URL' };
  if (m[1] === 'font-awesome') return packageFile(mirror, 'font-awesome', m[2], m[3]);
  return packageFile(mirror, 'bootstrap', m[2], `dist/${m[3]}`);
}

function fontAwesomeCdn(mirror, ctx) {
  const m = /^\/releases\/v(\d+\.\d+\.\d+)\/(.+)$/.exec(ctx.path);
  if (!m) return { miss: 'not a use.fontawesome.com release URL' };
  return packageFile(mirror, '@fortawesome/fontawesome-free', m[1], m[2]);
}

function packageFile(mirror, name, version, rel) {
  const found = mirror.resolve(name, version);
  if (found.miss) return found;
  return mirror.isFile(found.pkg, rel) ? { file: { pkg: found.pkg, rel }, immutable: true } : { miss: `${name}@${version} has no file ${rel}` };
}

// ---------------------------------------------------------------------------------------------
// Google Fonts: CSS generated from @fontsource's per-weight CSS, font files under fonts.gstatic.com.

const GSTATIC_PREFIX = 'https://fonts.gstatic.com/s/evalgrid/';

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
    const seen = new Set();
    for (const [style, weight] of request.faces) {
      const weights = Array.isArray(weight) ? font.weights.filter((w) => w >= weight[0] && w <= weight[1]) : [weight];
      for (const w of weights) {
        const key = `${w}${style === 'italic' ? '-italic' : ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        let css;
        try {
          css = fs.readFileSync(path.join(font.pkg.dir, `${key}.css`), 'utf8');
        } catch {
          log({ kind: 'miss', url: ctx.url, family, reason: `${family} has no ${style} ${w}` });
          continue;
        }
        css = css
          .replace(/font-family:\s*'[^']*'/g, `font-family: '${font.family}'`)
          .replace(/url\(\.\/files\//g, `url(${GSTATIC_PREFIX}${font.id}/files/`)
          .replace(/\s*font-display:[^;]*;/g, display ? `\n  font-display: ${display.replace(/[^a-z]/g, '')};` : '');
        chunks.push(css);
      }
    }
    served.push(`${font.pkg.name}@${font.pkg.version}`);
  }
  if (!chunks.length) return { miss: 'no requested font family is mirrored' };
  return { body: chunks.join('\n'), type: 'text/css; charset=utf-8', pkg: served.join(',') };
}

function gstatic(mirror, ctx) {
  if (!ctx.path.startsWith('/s/evalgrid/')) return { miss: 'not a mirrored font file' };
  const m = /^\/s\/evalgrid\/([a-z0-9-]+)\/(files\/[^/]+)$/.exec(ctx.path);
  if (!m) return { miss: 'not a mirrored font file' };
  const found = mirror.resolve('@fontsource/' + m[1], '');
  if (found.miss) return found;
  return mirror.isFile(found.pkg, m[2]) ? { file: { pkg: found.pkg, rel: m[2] }, immutable: true } : { miss: `no font file ${m[2]}` };
}

// esm.sh and Skypack serve npm packages as ES modules: `import React from "https://esm.sh/react@18"`,
// `import { createRoot } from "https://esm.sh/react-dom@18/client"`. Each module is bundled on
// request with the toolchain's esbuild; the package's dependencies stay separate modules, at their
// esm.sh addresses (so react-dom and the page share one React), and a CommonJS package gets its named exports
// from the index made at image build. Built modules are kept for the sandbox's lifetime.
const LOG_LIMIT_BYTES = 2 * 1024 * 1024;
const ESBUILD = process.env.EVALGRID_ESBUILD || '/opt/evalgrid/toolchain/node_modules/esbuild';
const esModules = new Map();

function esModuleCdn(mirror, ctx) {
  const spec = parseSpec(ctx.path.replace(/^\/(?:v\d+|stable|pin\/v\d+)\//, '/'));
  if (!spec) return { miss: 'not a package URL' };
  const found = mirror.resolve(spec.name, spec.range);
  if (found.miss) return found;
  const pkg = found.pkg;
  const rest = spec.rest.replace(/\/+$/, '');
  if (spec.range === undefined || !isExactVersion(spec.range) || found.note) {
    return { redirect: `${ctx.origin}/${pkg.name}@${pkg.version}${rest}`, pkg, note: found.note };
  }
  const key = `${pkg.name}@${pkg.version}${rest}`;
  if (!esModules.has(key)) esModules.set(key, buildEsModule(mirror, pkg, rest ? `.${rest}` : '.'));
  const built = esModules.get(key);
  return built.code !== undefined
    ? { body: built.code, type: 'application/javascript; charset=utf-8', pkg: key, immutable: true }
    : { miss: built.error };
}

// The file a package exports at `sub` ("." or "./client") for a browser importing it, or null when the
// package does not export that subpath. A package with an `exports` map exports only what the map names
// (patterns included), as Node and esm.sh have it; one without a map exports its entry and its module
// files, but never its command-line scripts (its `bin`): those are programs, not modules.
function exportedFile(mirror, pkg, sub) {
  const pick = (target) => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) return target.map(pick).find(Boolean);
    if (target && typeof target === 'object') {
      for (const cond of ['browser', 'import', 'module', 'default', 'require']) {
        const hit = pick(target[cond]);
        if (hit) return hit;
      }
    }
    return null;
  };
  const exp = pkg.json.exports;
  if (exp !== undefined && exp !== null) {
    const sugar = typeof exp === 'string' || Array.isArray(exp) || !Object.keys(exp).some((k) => k.startsWith('.'));
    let file = null;
    if (sugar) file = sub === '.' ? pick(exp) : null;
    else if (Object.hasOwn(exp, sub)) file = pick(exp[sub]);
    else {
      for (const key of Object.keys(exp)) {
        const star = key.indexOf('*');
        if (star < 0 || !sub.startsWith(key.slice(0, star)) || !sub.endsWith(key.slice(star + 1))) continue;
        const middle = sub.slice(star, sub.length - (key.length - star - 1));
        const target = pick(exp[key]);
        if (target && !middle.split('/').includes('..')) file = target.split('*').join(middle);
        break;
      }
    }
    return file && mirror.isFile(pkg, stripDotSlash(file)) ? stripDotSlash(file) : null;
  }
  if (sub === '.') {
    const main = [pkg.json.module, pkg.json.main].find((f) => typeof f === 'string');
    return resolveModulePath(mirror, pkg, main ? stripDotSlash(main) : '');
  }
  const rel = resolveModulePath(mirror, pkg, sub.slice(2));
  return rel && !binScripts(pkg).has(rel) && !rel.startsWith('bin/') ? rel : null;
}

function binScripts(pkg) {
  const bin = pkg.json.bin;
  const files = typeof bin === 'string' ? [bin] : bin && typeof bin === 'object' ? Object.values(bin) : [];
  return new Set(files.filter((f) => typeof f === 'string').map(stripDotSlash));
}

function buildEsModule(mirror, pkg, sub) {
  let esbuild;
  try {
    esbuild = require(ESBUILD);
  } catch {
    return { error: 'esbuild is not installed beside the mirror' };
  }
  // Vue's ES module for browsers carries the template compiler that pages with in-DOM templates need.
  const rel = pkg.name === 'vue' && sub === '.' && mirror.isFile(pkg, 'dist/vue.esm-browser.prod.js')
    ? 'dist/vue.esm-browser.prod.js' : exportedFile(mirror, pkg, sub);
  if (!rel) return { error: `${pkg.name}@${pkg.version} exports nothing at ${sub}` };
  const file = safeJoin(pkg.dir, rel);
  // Dependencies become imports of their own modules here, at the versions this package's ranges pick.
  const deps = new Map();
  for (const [name, range] of Object.entries({ ...pkg.json.peerDependencies, ...pkg.json.dependencies })) {
    const wanted = typeof range === 'string' && !/^(npm|file|link|git|http)/.test(range) ? range : '';
    // A sibling released in lockstep (react-dom 18.2.0 and react 18.2.0) is taken at the same version
    // when that fits, as a page importing both at one version expects: two Reacts break hooks.
    const sibling = mirror.resolve(name, pkg.version);
    const sets = parseRange(wanted);
    const dep = !sibling.miss && !sibling.note && sets && satisfies(sibling.pkg.parsed, sets)
      ? sibling : mirror.resolve(name, wanted);
    if (!dep.miss) deps.set(name, `https://esm.sh/${name}@${dep.pkg.version}`);
  }
  // A subpath that requires its own package's root (react/jsx-runtime requires react) shares it.
  if (sub !== '.') deps.set(pkg.name, `https://esm.sh/${pkg.name}@${pkg.version}`);
  // esbuild tells what the file is: an ES module (and whether it has a default export) or CommonJS.
  let probe = null;
  try {
    probe = esbuild.buildSync({ entryPoints: [file], format: 'esm', write: false, metafile: true, logLevel: 'silent',
      outdir: 'probe' }).metafile;
  } catch {
    // the bundle below reports what is wrong with the file
  }
  const input = probe ? Object.values(probe.inputs)[0] : null;
  const isEsm = /\.mjs$/.test(rel) || pkg.json.type === 'module' || (input && input.format === 'esm');
  let entry;
  if (isEsm) {
    const hasDefault = !!probe && Object.values(probe.outputs).some((o) => o.exports.includes('default'));
    entry = `export * from ${JSON.stringify(file)};\n` + (hasDefault
      ? `export { default } from ${JSON.stringify(file)};\n`
      : `import * as __all from ${JSON.stringify(file)};\nexport default __all;\n`);
  } else {
    const names = mirror.cjsExports(file);
    entry = `import __m from ${JSON.stringify(file)};\nexport default __m;\n` +
      (names.length ? `export const { ${names.join(', ')} } = __m;\n` : '');
  }
  try {
    const out = esbuild.buildSync({
      stdin: { contents: entry, resolveDir: pkg.dir, sourcefile: 'evalgrid-esm-entry.js' },
      bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', write: false, logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
      external: [...deps.keys()].flatMap((name) => [name, `${name}/*`]),
    });
    let code = out.outputFiles[0].text;
    const depOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    // ES-module imports of a dependency point at its module.
    code = code.replace(/(\bfrom\s*|\bimport\s*\(?\s*)"([^"./][^"]*)"/g, (all, head, spec) => {
      const name = depOf(spec);
      return deps.has(name) ? `${head}"${deps.get(name)}${spec.slice(name.length)}"` : all;
    });
    // CommonJS code that requires a dependency finds it through a module-level `require` (esbuild's
    // __require looks for one), which imports just the dependencies the code asks for.
    const required = [...new Set([...code.matchAll(/__require\("([^"]+)"\)/g)].map((m) => m[1]))]
      .filter((spec) => deps.has(depOf(spec)));
    if (required.length) {
      const imports = required.map((spec, i) =>
        `import * as __dep${i} from ${JSON.stringify(deps.get(depOf(spec)) + spec.slice(depOf(spec).length))};`);
      const table = required.map((spec, i) => `${JSON.stringify(spec)}: __dep${i}`);
      code = `${imports.join('\n')}\nconst require = (n) => { const m = ({${table.join(', ')}})[n];` +
        ` if (!m) throw new Error("esm mirror: cannot require " + n); return "default" in m ? m.default : m; };\n${code}`;
    }
    return { code };
  } catch (err) {
    return { error: `could not build an ES module of ${pkg.name}@${pkg.version}${sub.slice(1)}: ${String(err.message).slice(0, 300)}` };
  }
}

function jsdelivrEsm(mirror, ctx) {
  const m = /^\/npm\/(.+)\/\+esm$/.exec(ctx.path);
  return esModuleCdn(mirror, { ...ctx, origin: 'https://esm.sh', path: `/${m[1]}` });
}

const HOSTS = {
  'unpkg.com': unpkg,
  'cdn.jsdelivr.net': jsdelivr,
  'fastly.jsdelivr.net': jsdelivr,
  'cdnjs.cloudflare.com': cdnjs,
  'cdn.tailwindcss.com': tailwindPlay,
  'fonts.googleapis.com': googleFonts,
  'fonts.gstatic.com': gstatic,
  'd3js.org': d3js,
  'code.jquery.com': codeJquery,
  'stackpath.bootstrapcdn.com': bootstrapCdn,
  'maxcdn.bootstrapcdn.com': bootstrapCdn,
  'use.fontawesome.com': fontAwesomeCdn,
  'esm.sh': esModuleCdn,
  'cdn.skypack.dev': esModuleCdn,
};

// ---------------------------------------------------------------------------------------------
// The proxy.

// Chromium's own background traffic (component updates, GCM, autofill, search preconnects) that its
// flags do not all turn off: refused like any other, but not recorded as the page's requests.
const CHROMIUM_SERVICES = /^(?:[\w-]+\.clients\.google\.com|clients\d*\.google\.com|www\.google\.com|accounts\.google\.com|(?:content-autofill|update|safebrowsing|optimizationguide-pa|clientservices)\.googleapis\.com|redirector\.gvt1\.com)$/;

function blockedKind(hostname) {
  return CHROMIUM_SERVICES.test(hostname) ? 'browser' : 'blocked';
}

function manifest(root) {
  const mirror = root instanceof Mirror ? root : new Mirror(root);
  const out = [];
  for (const list of mirror.packages.values()) for (const p of list) out.push({ name: p.name, version: p.version });
  for (const font of mirror.fonts.values()) {
    const entry = out.find((e) => e.name === font.pkg.name && e.version === font.pkg.version);
    if (entry) entry.family = font.family;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : compareVersions(parseVersion(a.version), parseVersion(b.version))));
}

// ---------------------------------------------------------------------------------------------
// The index, made once at image build: the packages, and the named exports of every module file the
// ES-module path may be asked for. Names come from loading each file, which runs its code: that happens
// here, in throwaway processes (one per package, again after any that dies: a command-line script
// calls process.exit), never in the running mirror.

const INDEX_SKIP_DIRS = new Set(['node_modules', 'bin', 'test', 'tests', '__tests__', 'example', 'examples', 'docs',
  'bench', 'benchmark', 'benchmarks']);
const INDEX_FILE_LIMIT = 2 * 1024 * 1024;
const INDEX_CHILD_TIMEOUT_MS = 5000;
const NAMES_CHILD = `
const fs = require('fs');
const [list, out] = process.argv.slice(1);
const files = JSON.parse(fs.readFileSync(list, 'utf8'));
for (let i = 0; i < files.length; i++) {
  let names = [];
  try {
    names = Object.keys(require(files[i])).filter((k) => /^[A-Za-z_$][\\w$]*$/.test(k) && k !== 'default');
  } catch {
    // an ES module, or one that cannot load outside a browser: it keeps its default export
  }
  fs.appendFileSync(out, JSON.stringify([i, names]) + '\\n');
}
process.exit(0);
`;

function indexCandidates(mirror, pkg) {
  const subs = new Set(['.']);
  const exp = pkg.json.exports;
  if (exp && typeof exp === 'object' && !Array.isArray(exp)) {
    for (const key of Object.keys(exp)) if (key.startsWith('./') && !key.includes('*')) subs.add(key);
  } else if (exp === undefined || exp === null) {
    const bins = binScripts(pkg);
    for (const rel of mirror.files(pkg.dir)) {
      const parts = rel.split('/');
      if (parts.length > 3 || parts.slice(0, -1).some((d) => INDEX_SKIP_DIRS.has(d)) || bins.has(rel)) continue;
      if (!/\.c?js$/.test(rel)) continue;
      try {
        if (fs.statSync(path.join(pkg.dir, rel)).size > INDEX_FILE_LIMIT) continue;
      } catch {
        continue;
      }
      subs.add(`./${rel}`);
    }
  }
  const files = new Set();
  for (const sub of subs) {
    const rel = exportedFile(mirror, pkg, sub);
    if (rel && !/\.mjs$/.test(rel) && pkg.json.type !== 'module') files.add(safeJoin(pkg.dir, rel));
  }
  return [...files].filter(Boolean);
}

function exportNames(files, scratch) {
  const names = new Map();
  let rest = files;
  while (rest.length) {
    const list = path.join(scratch, 'files.json');
    const out = path.join(scratch, 'names.jsonl');
    fs.writeFileSync(list, JSON.stringify(rest));
    fs.writeFileSync(out, '');
    require('child_process').spawnSync(process.execPath, ['-e', NAMES_CHILD, list, out], {
      stdio: 'ignore', timeout: INDEX_CHILD_TIMEOUT_MS, killSignal: 'SIGKILL', cwd: scratch,
    });
    let done = 0;
    for (const line of fs.readFileSync(out, 'utf8').split('\n')) {
      if (!line) continue;
      const [i, found] = JSON.parse(line);
      if (found.length) names.set(rest[i], found);
      done = i + 1;
    }
    rest = rest.slice(done + 1); // the file after the last answered one ended the child: it is skipped
  }
  return names;
}

// `only`: package names to index (all when empty), so a test can index what it uses in a second.
function buildIndex(dir, only = []) {
  const root = path.resolve(dir); // the children load files by path from a scratch directory
  const mirror = new Mirror(root);
  const scratch = fs.mkdtempSync(path.join(require('os').tmpdir(), 'mirror-index-'));
  const cjs = {};
  try {
    for (const [name, list] of mirror.packages) {
      if (only.length && !only.includes(name)) continue;
      for (const pkg of list) {
        for (const [file, names] of exportNames(indexCandidates(mirror, pkg), scratch)) {
          cjs[path.relative(root, file)] = names;
        }
      }
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return { version: 1, packages: manifest(mirror), cjs_exports: cjs };
}

function startMirror({ port, root, certFile, keyFile, logFile, indexFile }) {
  const mirror = new Mirror(root, indexFile ? JSON.parse(fs.readFileSync(indexFile, 'utf8')) : null);
  const secureContext = tls.createSecureContext({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) });
  const tunnelHost = new WeakMap(); // TLS socket → the host its CONNECT named

  // Capped: a page that polls a refused host must not fill /tmp or the driver's reply with its log.
  const log = (record) => {
    if (!logFile) return;
    try {
      if (fs.statSync(logFile, { throwIfNoEntry: false })?.size > LOG_LIMIT_BYTES) return;
      fs.appendFileSync(logFile, JSON.stringify(record) + '\n');
    } catch {
      // a full or vanished log must not take the proxy down with it
    }
  };

  const answer = (req, res, scheme, host) => {
    let target;
    try {
      target = new URL(req.url.startsWith('/') ? `${scheme}://${host}${req.url}` : req.url);
    } catch {
      return fail(res, 400, 'bad request URL');
    }
    const hostname = target.hostname.toLowerCase();
    const url = target.href.slice(0, 2048);
    const handler = Object.hasOwn(HOSTS, hostname) ? HOSTS[hostname] : undefined;
    if (!handler || (scheme === 'https' && hostname !== host)) {
      log({ kind: blockedKind(hostname), url });
      return fail(res, 403, `${hostname} is not reachable from the sandbox`, { 'X-Evalgrid-Blocked': '1' });
    }
    let pathname;
    try {
      pathname = decodeURIComponent(target.pathname);
    } catch {
      log({ kind: 'miss', url, reason: 'undecodable path' });
      return fail(res, 400, 'undecodable path');
    }
    const ctx = { url, origin: `${target.protocol}//${target.host}`, path: pathname, search: target.search, query: target.searchParams };
    let result;
    try {
      result = handler(mirror, ctx, log);
    } catch (err) {
      result = { miss: `mirror error: ${err && err.message}` };
    }
    const cors = { 'Access-Control-Allow-Origin': '*', 'Timing-Allow-Origin': '*' };
    if (result.redirect) {
      const record = { kind: 'served', url, package: `${result.pkg.name}@${result.pkg.version}`, redirect: result.redirect };
      if (result.note) record.note = result.note;
      log(record);
      res.writeHead(302, { ...cors, Location: result.redirect, 'Cache-Control': 'public, max-age=600', 'Content-Length': 0 });
      return res.end();
    }
    if (result.body !== undefined) {
      const body = Buffer.from(result.body);
      log({ kind: 'served', url, package: result.pkg });
      res.writeHead(200, { ...cors, 'Content-Type': result.type, 'Content-Length': body.length,
        'Cache-Control': result.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=86400' });
      return res.end(req.method === 'HEAD' ? undefined : body);
    }
    if (result.file) {
      const { pkg, rel } = result.file;
      const full = safeJoin(pkg.dir, rel);
      let size;
      try {
        size = fs.statSync(full).size;
      } catch {
        result = { miss: `${rel} vanished` };
      }
      if (size !== undefined) {
        const record = { kind: 'served', url, package: `${pkg.name}@${pkg.version}`, file: rel };
        if (result.note) record.note = result.note;
        log(record);
        res.writeHead(200, {
          ...cors,
          'Content-Type': contentType(rel),
          'Content-Length': size,
          'Cache-Control': result.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600',
        });
        if (req.method === 'HEAD') return res.end();
        // pipeline, not pipe: a page that aborts the download must not leave the file open.
        return stream.pipeline(fs.createReadStream(full), res, () => {});
      }
    }
    log({ kind: 'miss', url, reason: result.miss });
    return fail(res, 404, result.miss);
  };

  const fail = (res, status, message, extra = {}) => {
    const body = Buffer.from(`${message}\n`);
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length, 'Access-Control-Allow-Origin': '*', ...extra });
    res.end(body);
  };

  // Requests arriving inside TLS tunnels: HTTP over the decrypted socket.
  const inner = http.createServer((req, res) => {
    const host = tunnelHost.get(req.socket) || '';
    safely(res, () => answer(req, res, 'https', host));
  });
  inner.on('clientError', (_err, socket) => socket.destroy());

  const proxy = http.createServer((req, res) => {
    safely(res, () => {
      if (req.url.startsWith('/')) return fail(res, 400, 'this is a proxy: send absolute URLs or CONNECT');
      return answer(req, res, 'http', '');
    });
  });
  proxy.on('clientError', (_err, socket) => socket.destroy());
  proxy.on('connect', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(req.url || '');
    const host = m ? m[1].toLowerCase() : '';
    if (!Object.hasOwn(HOSTS, host) || (m[2] && m[2] !== '443')) {
      log({ kind: blockedKind(host.toLowerCase()), url: `https://${host.slice(0, 256)}/` });
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head && head.length) socket.unshift(head);
    const secure = new tls.TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
    secure.on('error', () => secure.destroy());
    tunnelHost.set(secure, host);
    inner.emit('connection', secure);
  });

  return new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(port, '127.0.0.1', () => {
      proxy.removeListener('error', reject);
      proxy.on('error', () => {});
      resolve({ server: proxy, mirror, close: () => new Promise((done) => proxy.close(() => done())) });
    });
  });
}

function safely(res, fn) {
  try {
    fn();
  } catch (err) {
    try {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`mirror error: ${err && err.message}\n`);
    } catch {
      res.destroy();
    }
  }
}

module.exports = { startMirror, manifest, buildIndex, parseRange, satisfies, parseVersion };

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--build-index' && argv[1]) {
    process.stdout.write(JSON.stringify(buildIndex(argv[1], argv.slice(2))), () => process.exit(0));
    return;
  }
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!args.port || !args.root || !args.cert || !args.key) {
    process.stderr.write('usage: node mirror.js --port P --root DIR --cert C --key K [--index F] [--log L]\n' +
                         '       node mirror.js --build-index DIR [NAME...]\n');
    process.exit(2);
  }
  // Pages under evaluation are hostile; whatever slips past the handlers must not end the mirror.
  process.on('uncaughtException', (err) => process.stderr.write(`mirror: ${err && err.stack}\n`));
  startMirror({ port: Number(args.port), root: args.root, certFile: args.cert, keyFile: args.key, logFile: args.log,
                indexFile: args.index })
    .then(() => process.stdout.write('ready\n'))
    .catch((err) => {
      process.stderr.write(`mirror: cannot start: ${err.message}\n`);
      process.exit(1);
    });
}
