// evalgrid's offline build of a framework answer, run by buildd.js in the app's build container (the
// app's user, no network, its own limits; the container and all it started end with the build).
//
//   node build.mjs APP_DIR STACK ENTRY      STACK: component | project
//
// Replaces APP_DIR's contents with the built app (index.html at its top), so the app is served from
// the origin's root as `vite preview` would: absolute asset paths (`/vite.svg` from public/) and
// `fetch("/data.json")` work. Everything printed is the build log the judge sees; the exit code says
// whether the build worked. Packages come only from the
// toolchain installed beside this file: a package the answer needs that is not there is a build
// failure of the answer, as it would be without `npm install` on a developer's machine.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { build as esbuild } from "esbuild";

const OUT = ".evalgrid-build";
const TOOLCHAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules");
// Component answers are written for playgrounds that load Tailwind (Claude artifacts, v0 ...); the
// sandbox's CDN mirror answers this URL, so utility classes style the component as its author saw it.
const TAILWIND = '<script src="https://cdn.tailwindcss.com"></script>';
const ASSET_LOADERS = Object.fromEntries(
  [".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".woff", ".woff2", ".ttf", ".mp3", ".wav"].map((ext) => [ext, "dataurl"]),
);

// The toolchain's packages appear in the app's node_modules as links: resolution then finds them the
// way it would after `npm install`, and Vite can still write its temporary files beside them.
function linkToolchain(appDir) {
  const target = path.join(appDir, "node_modules");
  fs.mkdirSync(target, { recursive: true });
  for (const name of fs.readdirSync(TOOLCHAIN)) {
    if (name.startsWith(".")) continue;
    const scoped = name.startsWith("@") ? fs.readdirSync(path.join(TOOLCHAIN, name)).map((n) => `${name}/${n}`) : [name];
    for (const pkg of scoped) {
      const link = path.join(target, pkg);
      if (fs.existsSync(link)) continue;
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(path.join(TOOLCHAIN, pkg), link);
    }
  }
}

function page(title, mountIds, script) {
  const mounts = mountIds.map((id) => `<div id="${id}"></div>`).join("");
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="UTF-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1.0">\n<title>${title}</title>\n${TAILWIND}\n` +
    `</head>\n<body>\n${mounts}\n${script}\n</body>\n</html>\n`;
}

function cssFiles(appDir) {
  return fs.readdirSync(appDir, { recursive: true })
    .filter((rel) => rel.endsWith(".css") && !rel.split(path.sep).some((p) => p === "node_modules" || p === OUT))
    .sort();
}

// A React component: mounted by a generated entry and bundled by esbuild alone (a fraction of Vite's time).
async function buildReactComponent(appDir, entry) {
  const source = fs.readFileSync(path.join(appDir, entry), "utf8");
  const imports = cssFiles(appDir).map((css) => `import ${JSON.stringify("./" + css)};`);
  // An answer that mounts itself is imported for its effect; otherwise its default export is mounted.
  const selfMounting = /\bcreateRoot\s*\(|ReactDOM\.render\s*\(/.test(source);
  const main = selfMounting
    ? [...imports, `import ${JSON.stringify("./" + entry)};`]
    : [...imports, 'import { createElement } from "react";', 'import { createRoot } from "react-dom/client";',
       `import App from ${JSON.stringify("./" + entry)};`,
       'createRoot(document.getElementById("root")).render(createElement(App));'];
  const out = path.join(appDir, OUT);
  await esbuild({
    stdin: { contents: main.join("\n"), resolveDir: appDir, sourcefile: "evalgrid-main.jsx", loader: "jsx" },
    bundle: true, outdir: out, entryNames: "app", format: "esm", jsx: "automatic", target: "chrome120",
    loader: { ".js": "jsx", ...ASSET_LOADERS }, define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "info", color: false,
  });
  const css = fs.existsSync(path.join(out, "app.css")) ? '<link rel="stylesheet" href="app.css">\n' : "";
  fs.writeFileSync(path.join(out, "index.html"),
    page("App", ["root", "app"], `${css}<script type="module" src="app.js"></script>`));
}

// A Vue single-file component: Vite with the Vue plugin, from a generated page and entry.
async function buildVueComponent(appDir, entry) {
  const imports = cssFiles(appDir).map((css) => `import ${JSON.stringify("./" + css)};`);
  fs.writeFileSync(path.join(appDir, "evalgrid-main.js"), [
    ...imports, 'import { createApp } from "vue";', `import App from ${JSON.stringify("./" + entry)};`,
    'createApp(App).mount("#app");',
  ].join("\n"));
  fs.writeFileSync(path.join(appDir, "index.html"), page("App", ["app"], '<script type="module" src="./evalgrid-main.js"></script>'));
  const { default: vue } = await import("@vitejs/plugin-vue");
  await vite(appDir, { configFile: false, plugins: [vue()] });
}

// A project: Vite with the project's own config when it has one, else the plugin its dependencies call for.
async function buildProject(appDir) {
  const hasConfig = fs.readdirSync(appDir).some((name) => /^vite\.config\.(js|mjs|cjs|ts|mts)$/.test(name));
  let plugins = [];
  if (!hasConfig) {
    const manifest = JSON.parse(fs.readFileSync(path.join(appDir, "package.json"), "utf8"));
    const deps = { ...manifest.dependencies, ...manifest.devDependencies };
    const plugin = deps.vue ? "@vitejs/plugin-vue" : deps.react ? "@vitejs/plugin-react" : null;
    plugins = plugin ? [(await import(plugin)).default()] : [];
  }
  await vite(appDir, hasConfig ? {} : { configFile: false, plugins });
}

// Vite is imported only when used: loading it takes most of a second, which the esbuild path does not need.
async function vite(appDir, config) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({
    ...config, root: appDir, base: "./", logLevel: "info", clearScreen: false,
    build: { outDir: path.join(appDir, OUT), emptyOutDir: true, reportCompressedSize: false },
  });
}

async function main() {
  const [appDir, stack, entry] = process.argv.slice(2);
  if (!appDir || !["component", "project"].includes(stack) || (stack === "component" && !entry)) {
    console.error("usage: node build.mjs APP_DIR component|project [ENTRY]");
    process.exit(2);
  }
  linkToolchain(appDir);
  const started = Date.now();
  if (stack === "project") await buildProject(appDir);
  else if (entry.endsWith(".vue")) await buildVueComponent(appDir, entry);
  else await buildReactComponent(appDir, entry);
  if (!fs.existsSync(path.join(appDir, OUT, "index.html"))) {
    throw new Error(`the build wrote no ${OUT}/index.html (a project's build.outDir or input points elsewhere?)`);
  }
  promote(appDir);
  console.log(`evalgrid: built in ${Date.now() - started} ms`);
}

// The build output takes the source's place (one filesystem: renames, no copies).
function promote(appDir) {
  const out = path.join(appDir, OUT);
  for (const name of fs.readdirSync(appDir)) {
    if (name !== OUT) fs.rmSync(path.join(appDir, name), { recursive: true, force: true });
  }
  for (const name of fs.readdirSync(out)) fs.renameSync(path.join(out, name), path.join(appDir, name));
  fs.rmdirSync(out);
}

main().catch((err) => {
  // esbuild has already printed its errors with their locations; Vite's need printing here.
  console.error(`evalgrid: build failed: ${err && err.message ? err.message : err}`);
  if (err && err.frame) console.error(err.frame);
  process.exit(1);
});
