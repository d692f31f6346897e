// The app's side of a sandbox: one build of a component or project answer, in a container of its own.
//
// Runs as the app's user (10002, never the machinery's 10001), in a container made for this one build
// (no network, its own pid namespace and limits, a read-only root) and thrown away after it, with
// everything the answer's build code started (a vite.config.js or postcss.config.js runs here). It shares
// nothing with the machinery's container: the answer's files come in with the request, the built files go
// back out with the reply, and the machinery serves them as data.
//
//   node buildd.js --stdio                          Docker: one request line on stdin, one reply line on stdout
//   node buildd.js --listen PORT --token-file FILE  Kubernetes (a build pod): one token-guarded connection
//
// Request {stack, entry, timeout_s, files: {path: base64}}; reply {exit_code, timed_out, seconds, log,
// files: {path: base64}, output_bytes}. Everything here is the app's: its log, its output, its exit code.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const net = require("net");
const path = require("path");
const { spawn } = require("child_process");

const APP_ROOT = "/srv/app";
const BUILD_SCRIPT = path.join(__dirname, "toolchain", "build.mjs");
const BUILD_LOG_LIMIT = 256 * 1024;
// What a build may hand back (the machinery's app directory holds 128 MiB); more is the answer's failure.
const OUTPUT_LIMIT = 96 * 1024 * 1024;
const REQUEST_LIMIT = 192 * 1024 * 1024;

function unpack(files) {
  for (const [rel, data] of Object.entries(files || {})) {
    const target = path.normalize(path.join(APP_ROOT, rel));
    if (!target.startsWith(APP_ROOT + path.sep)) throw new Error(`refusing a path outside the app: ${rel}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, Buffer.from(String(data), "base64"), { mode: 0o644 });
  }
}

// The built app: regular files only (a link the build left could name anything on the machinery's side).
function pack() {
  const files = {};
  let bytes = 0;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const data = fs.readFileSync(full);
        bytes += data.length;
        if (bytes > OUTPUT_LIMIT) throw new Error(`the build's output exceeds ${OUTPUT_LIMIT / 1048576} MiB`);
        files[path.relative(APP_ROOT, full).split(path.sep).join("/")] = data.toString("base64");
      }
    }
  };
  walk(APP_ROOT);
  return { files, bytes };
}

function build(request) {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks = [];
    let size = 0;
    const keep = (data) => {
      if (size < BUILD_LOG_LIMIT) chunks.push(data.subarray(0, BUILD_LOG_LIMIT - size));
      size += data.length;
    };
    const timeoutS = Math.max(1, Number(request.timeout_s) || 60);
    let child;
    try {
      unpack(request.files);
      child = spawn(process.execPath, [BUILD_SCRIPT, APP_ROOT, String(request.stack), String(request.entry || "")], {
        cwd: APP_ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      resolve({ exit_code: -1, timed_out: false, seconds: 0, log: `evalgrid: the build could not start: ${err.message}` });
      return;
    }
    let settled = false;
    let timedOut = false;
    const finish = (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      let log = Buffer.concat(chunks).toString("utf8");
      if (size > BUILD_LOG_LIMIT) log += `\n[build log cut at ${BUILD_LOG_LIMIT} bytes of ${size}]`;
      if (timedOut) log += `\nevalgrid: the build was killed after ${timeoutS} s`;
      const reply = { exit_code: code, timed_out: timedOut, seconds: (Date.now() - started) / 1000, log, files: {} };
      if (code === 0) {
        try {
          const packed = pack();
          reply.files = packed.files;
          reply.output_bytes = packed.bytes;
        } catch (err) {
          reply.exit_code = -1;
          reply.log += `\nevalgrid: ${err.message}`;
        }
      }
      resolve(reply);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ }
      setTimeout(() => finish(-1), 1000);
    }, timeoutS * 1000);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => {
      keep(Buffer.from(`evalgrid: the build could not start: ${err.message}\n`));
      finish(-1);
    });
    // Settles when the build process exits, not when its pipes close: a process it detached could hold
    // them open forever (it dies with this container).
    child.on("exit", (code) => setTimeout(() => finish(code === null ? -1 : code), 50));
  });
}

// One JSON line; `onBad` when it is too long or not JSON.
function readRequest(stream, onRequest, onBad) {
  const parts = [];
  let size = 0;
  const onData = (chunk) => {
    const end = chunk.indexOf(10);
    if (end < 0) {
      parts.push(chunk);
      size += chunk.length;
      if (size > REQUEST_LIMIT) {
        stream.removeListener("data", onData);
        onBad();
      }
      return;
    }
    parts.push(chunk.subarray(0, end));
    stream.removeListener("data", onData);
    stream.pause();
    let request;
    try {
      request = JSON.parse(Buffer.concat(parts).toString("utf8"));
    } catch {
      onBad();
      return;
    }
    onRequest(request);
  };
  stream.on("data", onData);
}

function sameToken(given, expected) {
  const a = Buffer.from(String(given || ""));
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function main(argv) {
  if (argv[0] === "--stdio") {
    readRequest(process.stdin, async (request) => {
      const reply = await build(request);
      process.stdout.write(JSON.stringify(reply) + "\n", () => process.exit(0));
    }, () => process.exit(3));
    return;
  }
  if (argv[0] === "--listen" && argv[2] === "--token-file") {
    const token = fs.readFileSync(argv[3], "utf8").trim();
    let busy = false;
    // Connections without the token (the kubelet's readiness probe, anything else) are dropped; the first
    // one with it gets the build, and the pod ends with the reply.
    const server = net.createServer((socket) => {
      socket.on("error", () => socket.destroy());
      readRequest(socket, async (request) => {
        if (busy || !sameToken(request.token, token)) {
          socket.destroy();
          return;
        }
        busy = true;
        server.close();
        const reply = await build(request);
        socket.end(JSON.stringify(reply) + "\n", () => process.exit(0));
      }, () => socket.destroy());
    });
    server.listen(Number(argv[1]), "0.0.0.0");
    return;
  }
  process.stderr.write("usage: node buildd.js --stdio | --listen PORT --token-file FILE\n");
  process.exit(2);
}

main(process.argv.slice(2));
