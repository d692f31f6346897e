// The sandbox's control operations, served inside the supervisor (sandboxd.js) to every control
// connection: the Docker backend's relay (`docker exec ... node relay.js control`) and the Kubernetes
// gate's control channel (gate.js).
//
// The channel is authenticated: a connection's first request is `hello` with the driver's nonce for this
// sandbox, and every reply carries the request's id and that nonce. The driver takes nothing else as a
// reply, so a line that reaches its end of the channel from anywhere but here is refused, not obeyed.
"use strict";

const fs = require("fs");
const net = require("net");
const path = require("path");

const APP_ROOT = "/srv/app";
const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
const MIRROR_LOG = path.join(STATE, "mirror.log");
const MIRROR_MANIFEST = "/opt/evalgrid/mirror-manifest.json";
const LINE_LIMIT = 256 * 1024 * 1024;
const POLL_MS = 20;

function readTail(file, limit) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return "";
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return "";
    const length = Math.min(stat.size, limit);
    const buffer = Buffer.alloc(length);
    const read = fs.readSync(fd, buffer, 0, length, stat.size - length);
    return buffer.toString("utf8", 0, read);
  } finally {
    fs.closeSync(fd);
  }
}

// Stale audio recorders: a finished run's `docker exec ... parec` can outlive its client. Only the
// machinery runs in this sandbox, so a recorder is known by its name.
function stopRecorders() {
  let stopped = 0;
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "parec") continue;
      process.kill(pid, "SIGKILL");
      stopped += 1;
    } catch {
      // gone meanwhile
    }
  }
  return stopped;
}

// The app's files, written by the machinery: the answer's source, or what its build container returned.
function load(files, sandbox) {
  for (const entry of fs.readdirSync(APP_ROOT)) fs.rmSync(path.join(APP_ROOT, entry), { recursive: true, force: true });
  let count = 0;
  for (const [rel, data] of Object.entries(files)) {
    const target = path.normalize(path.join(APP_ROOT, rel));
    if (!target.startsWith(APP_ROOT + path.sep)) throw new Error(`refusing a path outside the app: ${rel}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, Buffer.from(String(data), "base64"), { mode: 0o644, flag: "wx" });
    count += 1;
  }
  sandbox.takeServerLog();
  fs.writeFileSync(MIRROR_LOG, "");
  return { files: count };
}

function ready(sandbox, timeoutS) {
  const deadline = Date.now() + 1000 * (Number(timeoutS) > 0 ? Number(timeoutS) : 20);
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (sandbox.ready()) return resolve({ browser_starts: sandbox.browserStarts() });
      if (Date.now() > deadline) return reject(new Error("Chromium or the CDN mirror did not start (see sandboxd.log)"));
      setTimeout(poll, POLL_MS);
    };
    poll();
  });
}

// Which of `targets` ("host:port") this sandbox can open a TCP connection to: the egress probe of a sandbox
// whose isolation is a policy (Kubernetes), recorded in its evidence as what it found.
function egress(targets, timeoutS) {
  const limit = Math.min(Math.max(Number(timeoutS) || 2, 0.1), 10) * 1000;
  const list = Array.isArray(targets) ? targets.slice(0, 16).map(String) : [];
  return Promise.all(list.map((target) => new Promise((resolve) => {
    const at = target.lastIndexOf(":");
    const host = target.slice(0, at).replace(/^\[|\]$/g, "");
    const port = Number(target.slice(at + 1));
    const socket = net.connect({ host, port });
    const done = (result, detail) => { socket.destroy(); clearTimeout(timer); resolve({ target, result, detail }); };
    const timer = setTimeout(() => done("timeout", `no answer in ${limit} ms`), limit);
    socket.on("connect", () => done("reached", "connected"));
    socket.on("error", (err) => done("refused", err.code || err.message));
  }))).then((results) => ({ results }));
}

const handlers = {
  load: (request, sandbox) => load(request.files || {}, sandbox),
  // When a run is done with its app: what its server logged, and what the page asked the mirror for.
  stop: (_request, sandbox) => {
    const taken = sandbox.takeServerLog();
    return { log: taken.log, log_dropped: taken.dropped, mirror: readTail(MIRROR_LOG, 4 * 1024 * 1024),
             recorders_stopped: stopRecorders() };
  },
  // Written at image build: indexing the mirror here would cost every sandbox start ~150 ms of its CPU.
  mirror: () => {
    const index = JSON.parse(fs.readFileSync(MIRROR_MANIFEST, "utf8"));
    return { packages: index.packages };
  },
  ready: (request, sandbox) => ready(sandbox, request.timeout_s),
  egress: (request) => egress(request.targets, request.timeout_s),
  ping: () => ({}),
};

// One connection's requests, in order: a reply is written only after the previous one. The first request
// must be `hello` with the nonce every later reply carries.
function serveControl(socket, sandbox) {
  let nonce = null;
  let queue = Promise.resolve();
  let parts = [];
  let size = 0;
  socket.setEncoding("utf8");
  socket.on("error", () => socket.destroy());
  const handle = async (line) => {
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      return { id: null, ok: false, error: "not a JSON request" };
    }
    const id = request && request.id !== undefined ? request.id : null;
    if (nonce === null) {
      if (request.op !== "hello" || typeof request.nonce !== "string" || request.nonce.length < 16) {
        socket.destroy();
        return null;
      }
      nonce = request.nonce;
      return { id, ok: true };
    }
    try {
      const handler = Object.hasOwn(handlers, request.op) ? handlers[request.op] : null;
      if (!handler) throw new Error(`unknown op ${request.op}`);
      return { id, ok: true, ...(await handler(request, sandbox)) };
    } catch (err) {
      return { id, ok: false, error: String(err && err.message ? err.message : err) };
    }
  };
  const enqueue = (line) => {
    queue = queue.then(() => handle(line)).then((reply) => {
      if (reply !== null && !socket.destroyed) socket.write(JSON.stringify({ ...reply, nonce }) + "\n");
    }).catch(() => {});
  };
  // Only the new chunk is searched for the line's end: a load of many megabytes arrives in many chunks.
  socket.on("data", (chunk) => {
    let start = 0;
    let end;
    while ((end = chunk.indexOf("\n", start)) >= 0) {
      parts.push(chunk.slice(start, end));
      const line = parts.join("");
      parts = [];
      size = 0;
      start = end + 1;
      enqueue(line);
    }
    if (start < chunk.length) {
      parts.push(chunk.slice(start));
      size += chunk.length - start;
      if (size > LINE_LIMIT) socket.destroy();
    }
  });
}

module.exports = { serveControl, MIRROR_LOG, STATE };
