#!/usr/bin/env node
// Verifies a locked npm tree of the sandbox image by content, whatever npm version installed it.
//
//   node lockcheck.js PKGDIR              # package.json and package-lock.json agree
//   node lockcheck.js PKGDIR INSTALLED    # ... and INSTALLED/node_modules holds exactly the locked versions
//
// Why not compare lock files byte for byte: npm 9, 10 and 11 write different locks for the same tree
// (npm 11 adds every platform's optional packages, npm 9 and 10 drop their `libc` fields), so a byte
// comparison fails on most hosts while the installed versions are identical. What matters is the
// versions on disk, so that is what is checked. Exits 1 with one line per problem.
"use strict";
const fs = require("fs");
const path = require("path");

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    return { error: `${file}: ${err.code === "ENOENT" ? "missing" : err.message}` };
  }
}

// The dependencies package.json declares must be the ones the lock was made from, spec for spec.
function syncProblems(pkg, lock) {
  const declared = pkg.dependencies || {};
  const locked = (lock.packages && lock.packages[""] && lock.packages[""].dependencies) || {};
  const problems = [];
  for (const [name, spec] of Object.entries(declared)) {
    if (!(name in locked)) problems.push(`${name}@${spec} is in package.json but not in the lock`);
    else if (locked[name] !== spec) problems.push(`${name} is ${spec} in package.json but ${locked[name]} in the lock`);
  }
  for (const name of Object.keys(locked)) {
    if (!(name in declared)) problems.push(`${name} is in the lock but no longer in package.json`);
  }
  return problems;
}

// Every locked package that applies to this platform is installed at its locked version. Optional
// entries for other platforms (rollup's and esbuild's native builds) and dev-only entries are absent.
function installProblems(lock, installed) {
  const problems = [];
  let checked = 0;
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (!where.startsWith("node_modules/") || entry.link) continue;
    const manifest = path.join(installed, where, "package.json");
    if (!fs.existsSync(manifest)) {
      if (!entry.optional && !entry.devOptional && !entry.dev) problems.push(`${where} (${entry.version}) is locked but not installed`);
      continue;
    }
    const found = readJson(manifest);
    if (found.error) problems.push(found.error);
    else if (found.version !== entry.version) {
      problems.push(`${where} is ${found.version} on disk but ${entry.version} in the lock`);
    }
    checked += 1;
  }
  return { problems, checked };
}

function main(argv) {
  if (argv.length < 1 || argv.length > 2) {
    console.error("usage: lockcheck.js PKGDIR [INSTALLED]");
    return 2;
  }
  const pkgdir = argv[0];
  const pkg = readJson(path.join(pkgdir, "package.json"));
  const lock = readJson(path.join(pkgdir, "package-lock.json"));
  const unreadable = [pkg.error, lock.error].filter(Boolean);
  if (unreadable.length) {
    unreadable.forEach((line) => console.error(`error: ${line}`));
    return 1;
  }
  if (!(lock.lockfileVersion >= 2) || !lock.packages) {
    console.error(`error: ${pkgdir}/package-lock.json is lockfileVersion ${lock.lockfileVersion}; regenerate it` +
                  " with npm 11 (see images/sandbox/npm-tree.sh)");
    return 1;
  }
  const regenerate = `regenerate the lock: (cd ${pkgdir} && npx --yes npm@11 install --package-lock-only` +
                     " --legacy-peer-deps --ignore-scripts)";
  const sync = syncProblems(pkg, lock);
  if (sync.length) {
    console.error(`error: ${pkgdir}/package-lock.json does not match its package.json; ${regenerate}`);
    sync.forEach((line) => console.error(`  ${line}`));
    return 1;
  }
  if (argv.length === 2) {
    const { problems, checked } = installProblems(lock, argv[1]);
    if (problems.length) {
      console.error(`error: ${argv[1]}/node_modules is not the tree ${pkgdir}/package-lock.json locks:`);
      problems.slice(0, 20).forEach((line) => console.error(`  ${line}`));
      if (problems.length > 20) console.error(`  ... and ${problems.length - 20} more`);
      return 1;
    }
    console.log(`${checked} packages in ${argv[1]} match the lock`);
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
