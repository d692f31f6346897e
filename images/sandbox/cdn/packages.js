'use strict';
// The packages the mirror serves (/opt/evalgrid/mirror, installed by npm-tree.sh): which are installed at
// which versions, which version a spec picks, and which file a package path or export names.

const fs = require('fs');
const path = require('path');
const { fontFamilies } = require('./fonts');
const { compare, exactVersion, newestSatisfying, releaseLine, validRange } = require('./ranges');

// Indexed by each package.json's own name and version: aliases such as node_modules/react--17 are folder
// names only.
class Mirror {
  // `index`: the image build's index (indexer.js), whose CommonJS export names the ES-module path uses.
  constructor(root, index = null) {
    this.root = root;
    this.cjsIndex = new Map(Object.entries((index && index.cjs_exports) || {}));
    this.packages = new Map(); // name → [{name, version, dir, json}] ascending
    this.fileLists = new Map(); // dir → relative file paths
    this._scan(path.join(root, 'node_modules'), 0);
    for (const list of this.packages.values()) list.sort((a, b) => compare(a.version, b.version));
    this.fonts = fontFamilies(this.packages);
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
    if (typeof json.name !== 'string' || !exactVersion(json.version)) return;
    const list = this.packages.get(json.name) || [];
    if (list.some((p) => p.version === json.version)) return;
    list.push({ name: json.name, version: json.version, dir, json });
    this.packages.set(json.name, list);
  }

  // → {pkg, note?} | {miss: reason}
  resolve(name, range) {
    const list = this.packages.get(name);
    if (!list) return { miss: `package ${name} is not mirrored` };
    const wanted = range === undefined ? '' : range;
    const held = () => list.map((p) => p.version).join(', ');
    const exact = exactVersion(wanted);
    if (exact) {
      const pkg = list.find((p) => compare(p.version, exact) === 0);
      if (pkg) return { pkg };
      // A pinned patch release we do not hold: the newest one of the same major line (minor, for 0.x)
      // keeps the page working, as the model meant it to; the log says what was substituted. (A page
      // that pins the file with an integrity hash still refuses it: that is then on the record too.)
      const near = this._newest(list, releaseLine(exact));
      return near ? { pkg: near, note: `substituted ${near.version} for ${wanted}` }
        : { miss: `${name}@${wanted} is not mirrored (have ${held()})` };
    }
    if (validRange(wanted) === null) return { miss: `version range ${JSON.stringify(wanted)} not understood` };
    const pkg = this._newest(list, wanted);
    return pkg ? { pkg } : { miss: `no mirrored ${name} satisfies ${wanted} (have ${held()})` };
  }

  _newest(list, range) {
    const version = newestSatisfying(list.map((p) => p.version), range);
    return version === null ? null : list.find((p) => p.version === version);
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

// Node-style resolution unpkg applies to a requested path: as is, +.js, +.json, dir/index.js.
function resolveModulePath(mirror, pkg, rel) {
  if (rel && mirror.isFile(pkg, rel)) return rel;
  for (const ext of ['.js', '.json']) if (rel && mirror.isFile(pkg, rel + ext)) return rel + ext;
  const index = rel ? `${rel.replace(/\/$/, '')}/index.js` : 'index.js';
  return mirror.isFile(pkg, index) ? index : null;
}

// The file a package exports at `sub` ("." or "./client") for a browser importing it, or null when the
// package does not export that subpath. A package with an `exports` map exports only what the map names
// (patterns included), as Node and esm.sh have it; one without a map exports its entry and its module
// files, but never its command-line scripts (its `bin`): those are programs, not modules.
function exportedFile(mirror, pkg, sub) {
  const exp = pkg.json.exports;
  if (exp !== undefined && exp !== null) {
    const file = exportsMapTarget(exp, sub);
    return file && mirror.isFile(pkg, stripDotSlash(file)) ? stripDotSlash(file) : null;
  }
  if (sub === '.') {
    const main = [pkg.json.module, pkg.json.main].find((f) => typeof f === 'string');
    return resolveModulePath(mirror, pkg, main ? stripDotSlash(main) : '');
  }
  const rel = resolveModulePath(mirror, pkg, sub.slice(2));
  return rel && !binScripts(pkg).has(rel) && !rel.startsWith('bin/') ? rel : null;
}

// What an `exports` map gives a browser for `sub`: exact keys first, then "./x/*" patterns.
function exportsMapTarget(exp, sub) {
  const sugar = typeof exp === 'string' || Array.isArray(exp) || !Object.keys(exp).some((k) => k.startsWith('.'));
  if (sugar) return sub === '.' ? browserTarget(exp) : null;
  if (Object.hasOwn(exp, sub)) return browserTarget(exp[sub]);
  for (const key of Object.keys(exp)) {
    const star = key.indexOf('*');
    if (star < 0 || !sub.startsWith(key.slice(0, star)) || !sub.endsWith(key.slice(star + 1))) continue;
    const middle = sub.slice(star, sub.length - (key.length - star - 1));
    const target = browserTarget(exp[key]);
    return target && !middle.split('/').includes('..') ? target.split('*').join(middle) : null;
  }
  return null;
}

function browserTarget(target) {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) return target.map(browserTarget).find(Boolean);
  if (target && typeof target === 'object') {
    for (const cond of ['browser', 'import', 'module', 'default', 'require']) {
      const hit = browserTarget(target[cond]);
      if (hit) return hit;
    }
  }
  return null;
}

function binScripts(pkg) {
  const bin = pkg.json.bin;
  const files = typeof bin === 'string' ? [bin] : bin && typeof bin === 'object' ? Object.values(bin) : [];
  return new Set(files.filter((f) => typeof f === 'string').map(stripDotSlash));
}

module.exports = { Mirror, safeJoin, stripDotSlash, resolveModulePath, exportedFile, binScripts };
