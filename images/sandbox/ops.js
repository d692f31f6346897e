// The sandbox's operations, shared by both ways the driver reaches them: `control.js` (one
// `docker exec -i` session, Docker backend) and `gate.js` (one TCP port, Kubernetes backend).
//
// Cleaning up is done in-process, without spawning: after a fork bomb has used up the pids limit,
// a fresh `docker exec` or a `tar` could not start, but a `load` still clears the sandbox. (Only
// `start` and `build` spawn: the app's own processes.)
"use strict";

const fs = require("fs");
const net = require("net");
const path = require("path");
const { spawn } = require("child_process");

const APP_ROOT = "/srv/app";
const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
const OWN_CHILDREN = path.join(STATE, "own-children");
const MIRROR_LOG = path.join(STATE, "mirror.log");
const MIRROR_MANIFEST = "/opt/evalgrid/mirror-manifest.json";
// Chromium's stderr (sandboxd.js appends each start's): it names its browser target once it listens.
const CHROMIUM_LOG = path.join(STATE, "chromium.log");
const LISTENING = /DevTools listening on ws:\/\/[^/\s]+(\/devtools\/browser\/[\w-]+)/g;
const LOG_TAIL_BYTES = 64 * 1024;
const MIRROR_PORT = 8079;
const POLL_MS = 20;

function processes() {
  const table = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      table.set(pid, { ppid, comm });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

function readPids(file) {
  try {
    return fs.readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

// Which processes belong to the sandbox and survive a reset, decided by ancestry, never by
// command line (an app can name its processes anything): init, the supervisor, the children the
// supervisor started for itself (Chromium, PulseAudio; listed in OWN_CHILDREN) with everything
// below them, and evalgrid's own `docker exec` sessions (parent pid 0: the DevTools bridges, the
// control channel) except audio recorders, which a finished run leaves behind. Any other child of
// the supervisor (an app process or a recorder the gate started) is the app's or stale.
function killStrays() {
  const table = processes();
  const supervisor = Number(fs.readFileSync(path.join(STATE, "sandboxd.pid"), "utf8"));
  const own = new Set(readPids(OWN_CHILDREN));
  const keep = new Set([1, supervisor, process.pid]);
  const ownDescendant = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      if (own.has(p)) return true;
      const info = table.get(p);
      if (!info || info.ppid === supervisor && !own.has(p)) return false;
      p = info.ppid;
    }
    return false;
  };
  for (const [pid, info] of table) {
    if (ownDescendant(pid) || (info.ppid === 0 && info.comm !== "parec")) keep.add(pid);
  }
  let killed = 0;
  for (const pid of table.keys()) {
    if (keep.has(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed += 1;
    } catch {
      // already gone
    }
  }
  return killed;
}

// The app owns the state directory's files: a file it replaced with a FIFO must not block this
// process (opened non-blocking, and only a regular file is read).
function readIfThere(file, limit = Infinity) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
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

// Again until none is left: a fork bomb replaces the copies it loses while the first pass runs.
function killAllStrays() {
  let killed = 0;
  for (let pass = 0; pass < 20; pass++) {
    const now = killStrays();
    killed += now;
    if (now === 0) break;
  }
  return killed;
}

function load(files) {
  const killed = killAllStrays();
  for (const entry of fs.readdirSync(APP_ROOT)) fs.rmSync(path.join(APP_ROOT, entry), { recursive: true, force: true });
  for (const [rel, data] of Object.entries(files)) {
    const target = path.normalize(path.join(APP_ROOT, rel));
    if (!target.startsWith(APP_ROOT + path.sep)) throw new Error(`refusing a path outside the app: ${rel}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, Buffer.from(data, "base64"), { mode: 0o644 });
  }
  fs.writeFileSync(path.join(STATE, "server.log"), "");
  fs.writeFileSync(MIRROR_LOG, "");
  return { killed, files: Object.keys(files).length };
}

// A process of the app (what a dev server would be); not one of the supervisor's own children,
// so the next reset kills it.
function start(argv) {
  if (!Array.isArray(argv) || argv.length === 0) throw new Error("start needs a non-empty argv");
  const child = spawn(argv[0], argv.slice(1), { cwd: APP_ROOT, detached: true, stdio: "ignore" });
  child.on("error", () => {});
  child.unref();
  return { pid: child.pid };
}

// The offline build of a framework answer (toolchain/build.mjs) as one of the app's processes: it runs
// the answer's own code (a vite.config.js), so it gets what the app gets, and the next reset kills
// whatever it leaves behind. Settles when the build process exits (not when its pipes close: a
// process it detached could hold them open forever) or when it is killed at the time limit. A build
// that cannot even start (no pids left) is the sandbox's failure, not the answer's: that rejects.
const BUILD_SCRIPT = "/opt/evalgrid/toolchain/build.mjs";
const BUILD_LOG_LIMIT = 256 * 1024;

function build(stack, entry, timeoutS) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const chunks = [];
    let size = 0;
    const keep = (data) => {
      if (size < BUILD_LOG_LIMIT) chunks.push(data.subarray(0, BUILD_LOG_LIMIT - size));
      size += data.length;
    };
    const child = spawn("node", [BUILD_SCRIPT, APP_ROOT, String(stack), String(entry || "")], {
      cwd: APP_ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"],
    });
    let settled = false;
    let timedOut = false;
    const finish = (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      let log = Buffer.concat(chunks).toString("utf8");
      if (size > BUILD_LOG_LIMIT) log += `\n[build log cut at ${BUILD_LOG_LIMIT} bytes of ${size}]`;
      if (timedOut) log += `\nevalgrid: the build was killed after ${timeoutS} s`;
      resolve({ exit_code: code, timed_out: timedOut, seconds: (Date.now() - started) / 1000, log });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ }
      setTimeout(() => finish(-1), 1000); // its exit may never be reported (a zombie's parent is us)
    }, Math.max(1, Number(timeoutS) || 60) * 1000);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`the build could not start: ${err.message}`));
    });
    // A moment after exit for the last output still in the pipes.
    child.on("exit", (code) => setTimeout(() => finish(code === null ? -1 : code), 50));
  });
}

// The running Chromium's browser target, once it listens and the CDN mirror does too: the driver
// connects straight to the target's WebSocket (one forwarded connection, and no retries that each
// cost a `docker exec`), and the first page it loads finds the mirror answering. The last start's
// line in Chromium's log counts: after a crash, an old target fails to connect and the driver asks again.
function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("connect", () => { socket.destroy(); resolve(true); });
    socket.on("error", () => resolve(false));
  });
}

function devtools(timeoutS) {
  const deadline = Date.now() + 1000 * (Number(timeoutS) > 0 ? Number(timeoutS) : 20);
  return new Promise((resolve, reject) => {
    const poll = async () => {
      const targets = [...readIfThere(CHROMIUM_LOG, LOG_TAIL_BYTES).matchAll(LISTENING)];
      if (targets.length && (await listening(MIRROR_PORT))) return resolve({ path: targets[targets.length - 1][1] });
      if (Date.now() > deadline) {
        return reject(new Error(targets.length ? "the CDN mirror is not listening (see sandboxd.log)"
          : "Chromium is not listening for DevTools (see chromium.log)"));
      }
      setTimeout(poll, POLL_MS);
    };
    poll();
  });
}

const handlers = {
  load: (request) => load(request.files || {}),
  start: (request) => start(request.argv),
  build: (request) => build(request.stack, request.entry, request.timeout_s),
  // When a run is done with its app: what it logged, and none of its processes left running. A
  // stray (something its build or dev server left behind) could reach Chromium's DevTools and
  // tamper with the contexts the driver makes next, for another run.
  stop: () => ({ killed: killAllStrays(), log: readIfThere(path.join(STATE, "server.log")),
                 mirror: readIfThere(MIRROR_LOG) }),
  // Written at image build: indexing the mirror here would cost every sandbox start ~150 ms of its CPU.
  mirror: () => ({ packages: JSON.parse(fs.readFileSync(MIRROR_MANIFEST, "utf8")) }),
  devtools: (request) => devtools(request.timeout_s),
  ping: () => ({}),
};

// One request line in, one reply line out (no newline): errors are replies, never exceptions.
async function handleLine(line) {
  let reply;
  try {
    const request = JSON.parse(line);
    const handler = handlers[request.op];
    if (!handler) throw new Error(`unknown op ${request.op}`);
    reply = { ok: true, ...(await handler(request)) };
  } catch (err) {
    reply = { ok: false, error: String(err && err.message ? err.message : err) };
  }
  return JSON.stringify(reply);
}

// Serves one channel's request lines in order: a reply is written only after the previous one.
function serveLines(input, write) {
  let queue = Promise.resolve();
  require("readline").createInterface({ input, crlfDelay: Infinity }).on("line", (line) => {
    queue = queue.then(() => handleLine(line)).then((reply) => write(reply + "\n")).catch(() => {});
  });
}

module.exports = { serveLines, OWN_CHILDREN, STATE };
