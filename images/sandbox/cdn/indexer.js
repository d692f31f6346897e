'use strict';
// The index, made once at image build (mirror.js --build-index): the packages, and the named exports of
// every module file the ES-module path may be asked for. Names come from loading each file, which runs its
// code: that happens here, in throwaway processes (one per package, again after any that dies: a
// command-line script calls process.exit), never in the running mirror.

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Mirror, binScripts, exportedFile, safeJoin } = require('./packages');
const { compare } = require('./ranges');

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

// `only`: package names to index (all when empty), so a test can index what it uses in a second.
function buildIndex(dir, only = []) {
  const root = path.resolve(dir); // the children load files by path from a scratch directory
  const mirror = new Mirror(root);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mirror-index-'));
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

// Every package and version held, with the family of each font package (the evidence's `web.mirror`).
function manifest(mirror) {
  const out = [];
  for (const list of mirror.packages.values()) for (const p of list) out.push({ name: p.name, version: p.version });
  for (const font of mirror.fonts.values()) {
    const entry = out.find((e) => e.name === font.pkg.name && e.version === font.pkg.version);
    if (entry) entry.family = font.family;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : compare(a.version, b.version)));
}

// The CommonJS files of a package the ES-module path may build: its exports, or with no exports map its
// module files outside tests, examples and command-line scripts.
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
    childProcess.spawnSync(process.execPath, ['-e', NAMES_CHILD, list, out], {
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

module.exports = { buildIndex };
