'use strict';
// ES modules as esm.sh serves them, bundled on request with the toolchain's esbuild (which only parses:
// no package code runs here). A package's dependencies stay separate modules at their esm.sh addresses,
// so react-dom and the page share one React; a CommonJS package gets its named exports from the index
// made at image build. Built modules are kept for the sandbox's lifetime.

const { exportedFile, safeJoin } = require('./packages');
const { satisfies } = require('./ranges');

const ESBUILD = process.env.EVALGRID_ESBUILD || '/opt/evalgrid/toolchain/node_modules/esbuild';
const built = new Map();

// The module of `pkg` at subpath `rest` ("" or "/client") → {code} | {error}.
function esModule(mirror, pkg, rest) {
  const key = `${pkg.name}@${pkg.version}${rest}`;
  if (!built.has(key)) built.set(key, buildEsModule(mirror, pkg, rest ? `.${rest}` : '.'));
  return built.get(key);
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
  const deps = dependencyModules(mirror, pkg, sub);
  try {
    const entry = entrySource(esbuild, mirror, pkg, rel);
    const out = esbuild.buildSync({
      stdin: { contents: entry, resolveDir: pkg.dir, sourcefile: 'evalgrid-esm-entry.js' },
      bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', write: false, logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
      external: [...deps.keys()].flatMap((name) => [name, `${name}/*`]),
    });
    return { code: linkDependencies(out.outputFiles[0].text, deps) };
  } catch (err) {
    return { error: `could not build an ES module of ${pkg.name}@${pkg.version}${sub.slice(1)}: ${String(err.message).slice(0, 300)}` };
  }
}

// name → esm.sh URL of each dependency, at the version this package's ranges pick.
function dependencyModules(mirror, pkg, sub) {
  const deps = new Map();
  for (const [name, range] of Object.entries({ ...pkg.json.peerDependencies, ...pkg.json.dependencies })) {
    const wanted = typeof range === 'string' && !/^(npm|file|link|git|http)/.test(range) ? range : '';
    // A sibling released in lockstep (react-dom 18.2.0 and react 18.2.0) is taken at the same version
    // when that fits, as a page importing both at one version expects: two Reacts break hooks.
    const sibling = mirror.resolve(name, pkg.version);
    const dep = !sibling.miss && !sibling.note && satisfies(sibling.pkg.version, wanted)
      ? sibling : mirror.resolve(name, wanted);
    if (!dep.miss) deps.set(name, `https://esm.sh/${name}@${dep.pkg.version}`);
  }
  // A subpath that requires its own package's root (react/jsx-runtime requires react) shares it.
  if (sub !== '.') deps.set(pkg.name, `https://esm.sh/${pkg.name}@${pkg.version}`);
  return deps;
}

// The bundle's entry: the file's exports, and a default export whatever the file is. esbuild tells what
// it is: an ES module (and whether it has a default export) or CommonJS.
function entrySource(esbuild, mirror, pkg, rel) {
  const file = safeJoin(pkg.dir, rel);
  let probe = null;
  try {
    probe = esbuild.buildSync({ entryPoints: [file], format: 'esm', write: false, metafile: true, logLevel: 'silent',
      outdir: 'probe' }).metafile;
  } catch {
    // the bundle reports what is wrong with the file
  }
  const input = probe ? Object.values(probe.inputs)[0] : null;
  if (/\.mjs$/.test(rel) || pkg.json.type === 'module' || (input && input.format === 'esm')) {
    const hasDefault = !!probe && Object.values(probe.outputs).some((o) => o.exports.includes('default'));
    return `export * from ${JSON.stringify(file)};\n` + (hasDefault
      ? `export { default } from ${JSON.stringify(file)};\n`
      : `import * as __all from ${JSON.stringify(file)};\nexport default __all;\n`);
  }
  const names = mirror.cjsExports(file);
  return `import __m from ${JSON.stringify(file)};\nexport default __m;\n` +
    (names.length ? `export const { ${names.join(', ')} } = __m;\n` : '');
}

const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

// The bundle's imports of a dependency, pointed at the dependency's module.
function linkDependencies(bundle, deps) {
  const moduleOf = (spec) => deps.get(packageOf(spec)) + spec.slice(packageOf(spec).length);
  const code = bundle.replace(/(\bfrom\s*|\bimport\s*\(?\s*)"([^"./][^"]*)"/g,
    (all, head, spec) => (deps.has(packageOf(spec)) ? `${head}"${moduleOf(spec)}"` : all));
  // CommonJS code that requires a dependency finds it through a module-level `require` (esbuild's
  // __require looks for one), which imports just the dependencies the code asks for.
  const required = [...new Set([...code.matchAll(/__require\("([^"]+)"\)/g)].map((m) => m[1]))]
    .filter((spec) => deps.has(packageOf(spec)));
  if (!required.length) return code;
  const imports = required.map((spec, i) => `import * as __dep${i} from ${JSON.stringify(moduleOf(spec))};`);
  const table = required.map((spec, i) => `${JSON.stringify(spec)}: __dep${i}`);
  return `${imports.join('\n')}\nconst require = (n) => { const m = ({${table.join(', ')}})[n];` +
    ` if (!m) throw new Error("esm mirror: cannot require " + n); return "default" in m ? m.default : m; };\n${code}`;
}

module.exports = { esModule };
