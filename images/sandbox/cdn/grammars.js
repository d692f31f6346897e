'use strict';
// Each CDN's URL grammar, read the way that CDN reads it, and HOSTS, the hosts the mirror answers. A
// handler (mirror, ctx, log) returns one of:
//   {file: {pkg, rel}, immutable, note?}   serve a package file
//   {redirect: location, pkg, note?}       302, like unpkg for ranges and default files
//   {body, type, pkg?, immutable?}         generated content (Google Fonts CSS, ES modules)
//   {miss: reason}                         404

const path = require('path');
const { esModule } = require('./esm');
const { googleFonts, gstatic } = require('./fonts');
const { resolveModulePath, stripDotSlash } = require('./packages');
const { compare, exactVersion, major, newestSatisfying, validRange } = require('./ranges');

// "/@scope/name@range/rest" → {name, range, rest}; range undefined when absent.
function parseSpec(p) {
  const m = /^\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]*))?(\/.*)?$/.exec(p);
  if (!m) return null;
  return { name: m[1], range: m[2], rest: m[3] || '' };
}

// A URL that names no exact version is redirected to the exact one, as the CDNs do.
const isPinned = (spec, found) => exactVersion(spec.range) !== null && !found.note;

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
  if (!isPinned(spec, found)) return { redirect: base + (spec.rest || '') + ctx.search, pkg, note: found.note };
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
  if (exactVersion(version) === null) return { miss: `cdnjs version ${m[2]} is not exact` };
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
  const build = wanted && wanted !== pkg.version ? tailwindBuild(mirror, pkg, wanted) : { dir: '' };
  if (build.miss) return build;
  const plugins = (ctx.query.get('plugins') || '').split(',').map((s) => s.trim().replace(/@.*$/, '')).filter(Boolean);
  let variant = 'tailwindcss.js';
  if (plugins.length === 1 && TAILWIND_PLUGINS.includes(plugins[0])) variant = `tailwindcss-with-${plugins[0]}.js`;
  else if (plugins.length) variant = 'tailwindcss-with-all-plugins.js';
  if (!mirror.isFile(pkg, build.dir + variant)) variant = 'tailwindcss-with-all-plugins.js';
  return { file: { pkg, rel: build.dir + variant }, immutable: false, note: build.note };
}

// The directory of the Play CDN build a version spec picks ('' for the newest, at the package root).
function tailwindBuild(mirror, pkg, wanted) {
  const exact = exactVersion(wanted);
  if (!exact && validRange(wanted) === null) return { miss: 'not a Tailwind Play CDN URL' };
  const builds = mirror.files(pkg.dir).filter((f) => /^\d+\.\d+\.\d+\/tailwindcss\.js$/.test(f));
  const held = [pkg.version, ...builds.map((f) => f.split('/')[0])].sort(compare);
  let pick = exact ? held.find((x) => compare(x, exact) === 0) : newestSatisfying(held, wanted);
  let note;
  if (!pick && exact && major(exact) === 3) {
    // The Play CDN is v3-only; a v3 build we do not hold is closer to the nearest one we do than
    // to nothing (a page without Tailwind renders unstyled), so serve that and say so.
    pick = newestSatisfying(held, `<=${exact}`) || held[0];
    note = `substituted ${pick} for ${wanted}`;
  }
  if (!pick) return { miss: `Tailwind Play CDN ${wanted} is not mirrored` };
  return { dir: pick === pkg.version ? '' : `${pick}/`, note };
}

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

// esm.sh and Skypack serve npm packages as ES modules: `import React from "https://esm.sh/react@18"`,
// `import { createRoot } from "https://esm.sh/react-dom@18/client"` (esm.js builds them).
function esModuleCdn(mirror, ctx) {
  const spec = parseSpec(ctx.path.replace(/^\/(?:v\d+|stable|pin\/v\d+)\//, '/'));
  if (!spec) return { miss: 'not a package URL' };
  const found = mirror.resolve(spec.name, spec.range);
  if (found.miss) return found;
  const pkg = found.pkg;
  const rest = spec.rest.replace(/\/+$/, '');
  const address = `${pkg.name}@${pkg.version}${rest}`;
  if (!isPinned(spec, found)) return { redirect: `${ctx.origin}/${address}`, pkg, note: found.note };
  const built = esModule(mirror, pkg, rest);
  return built.code !== undefined
    ? { body: built.code, type: 'application/javascript; charset=utf-8', pkg: address, immutable: true }
    : { miss: built.error };
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

module.exports = { HOSTS };
