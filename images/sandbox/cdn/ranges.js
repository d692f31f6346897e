'use strict';
// Versions and ranges as npm reads them, from the `semver` package: which of the versions the mirror holds
// a CDN URL's `@range`, or a package's dependency range, selects. The mirror holds no prereleases, and
// like npm a range never selects one.

const fs = require('fs');
const path = require('path');

// The mirror's own packages (package.json beside this file) are installed beside it in the image and by
// npm-tree.sh under images/sandbox/build/cdn in a checkout. They are taken by path, never by Node's module
// search, which would find whatever semver the host happens to have installed globally instead.
const OWN_PACKAGES = [path.join(__dirname, 'node_modules'), path.join(__dirname, '..', 'build', 'cdn', 'node_modules')];
const installed = OWN_PACKAGES.find((dir) => fs.existsSync(path.join(dir, 'semver', 'package.json')));
if (!installed) {
  throw new Error(`the mirror's own packages are not installed (looked in ${OWN_PACKAGES.join(', ')}); ` +
                  'run images/sandbox/npm-tree.sh images/sandbox/cdn images/sandbox/build/cdn');
}
const semver = require(path.join(installed, 'semver'));

// Loose for exact versions only: URLs pin "=18.2.0" and "v18.2.0" too. Ranges stay strict, as loose
// parsing reads junk such as ">=<<||" as "*".
const LOOSE = { loose: true };

// The version a spec pins ("18.2.0", "v18.2.0"), normalised, or null when the spec is a range or nothing.
function exactVersion(spec) {
  return typeof spec === 'string' ? semver.valid(spec, LOOSE) : null;
}

// The range a spec means, normalised, or null when it is not one. No range means any version, and so does
// "latest", the one dist-tag seen in CDN URLs: with no prereleases held, the newest version is the latest.
function validRange(spec) {
  const text = spec === undefined ? '' : String(spec).trim();
  return text === '' || text === 'latest' ? '*' : semver.validRange(text);
}

function satisfies(version, spec) {
  const range = validRange(spec);
  return range !== null && semver.satisfies(version, range, LOOSE);
}

// The newest of `versions` that `spec` selects, or null.
function newestSatisfying(versions, spec) {
  const range = validRange(spec);
  return range === null ? null : semver.maxSatisfying(versions, range, LOOSE);
}

const compare = (a, b) => semver.compare(a, b, LOOSE);
const major = (version) => semver.major(version, LOOSE);

// The versions that keep a pinned version's API: its major line, or its minor line under 0.x.
function releaseLine(version) {
  const v = semver.parse(version, LOOSE);
  return v.major === 0 ? `0.${v.minor}.x` : `${v.major}.x`;
}

module.exports = { exactVersion, validRange, satisfies, newestSatisfying, compare, major, releaseLine };
