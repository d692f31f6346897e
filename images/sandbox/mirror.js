'use strict';
// Offline CDN mirror for the sandbox's Chromium (run with --proxy-server=http://127.0.0.1:PORT and
// --ignore-certificate-errors). Model answers load libraries from unpkg, jsDelivr, cdnjs, the
// Tailwind Play CDN, Google Fonts and friends; the sandbox has no network, so this proxy answers
// those URLs the way the real CDN would, from npm packages installed at build time
// (npm-tree.sh), and refuses every other host. Every answer is logged so the evidence shows
// which libraries a page got and which it did not.
//
//   node mirror.js --port P --root DIR --cert C --key K --index F --log L   (prints "ready" when listening)
//   node mirror.js --build-index DIR [NAME...] > F   the index: packages, and CommonJS export names (image build)
//
// The mirror never runs package code. esm.sh-style ES modules are bundled with esbuild, which only parses;
// the named exports of a CommonJS entry come from the index, made once at image build by loading each
// entry in a throwaway process (a static lexer finds 0 of lodash's 308 names). It runs as a process of
// its own, beside the supervisor, never inside it.
//
// Node 18, CommonJS. The image has node but no npm, so npm-tree.sh installs on the host, as two separate
// trees, the packages the mirror serves (mirror/package.json) and the mirror's own dependencies
// (cdn/package.json: semver): a library added for pages never changes the code that serves it. The
// modules, in cdn/:
//   proxy.js     the proxy: tunnels, the log, responses
//   grammars.js  each CDN's URL grammar, and the hosts answered
//   fonts.js     Google Fonts CSS from @fontsource packages
//   esm.js       ES modules bundled on request (esm.sh, Skypack, jsDelivr's +esm)
//   packages.js  the packages served: versions held, files, exports
//   ranges.js    npm versions and ranges (semver)
//   indexer.js   the index (--build-index)

const { buildIndex } = require('./cdn/indexer');
const { startMirror } = require('./cdn/proxy');

const argv = process.argv.slice(2);
if (argv[0] === '--build-index' && argv[1]) {
  process.stdout.write(JSON.stringify(buildIndex(argv[1], argv.slice(2))), () => process.exit(0));
} else {
  serve();
}

function serve() {
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
