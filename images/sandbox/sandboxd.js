// evalgrid sandbox supervisor: the machinery of one sandbox. It serves the app's files on loopback,
// keeps one headless Chromium alive and answers the driver's control requests.
//
// Runs under tini as the machinery's user (10001), in a container with no network at all (Docker:
// --network none) or in a pod whose egress is denied (Kubernetes). No process of the app ever runs
// here: the app's code runs in Chromium's renderers (the page) and, for component and project answers,
// in a build container of its own (buildd.js, another uid, no network, thrown away after the build).
// So everything this process reads (its state directory, its logs, its sockets) is the machinery's.
//
// The driver comes in one of two ways, both ending at the same handlers:
//   Docker      `docker exec --user 10001 -i ... node relay.js control|devtools`, each a relay to a Unix
//               socket in the state directory (mode 0700: only the machinery's user can open it);
//   Kubernetes  the token-guarded gate (gate.js), EVALGRID_GATE_PORT set, the token in a file.
// Chromium speaks DevTools over --remote-debugging-pipe: it listens on no port at all.
"use strict";

const fs = require("fs");
const http = require("http");
const net = require("net");
const path = require("path");
const { spawn } = require("child_process");

const ops = require("./ops");

const APP_ROOT = "/srv/app";
const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
const APP_PORT = 8080;
const MIRROR_PORT = 8079;
const CHROMIUM = process.env.EVALGRID_CHROMIUM || "/usr/bin/chromium";
const PULSE_DIR = path.join(STATE, "pulse");
const PULSE_SOCKET = path.join(PULSE_DIR, "pulse.sock");
// The server log the driver gets is the last SERVER_LOG_BYTES of it: a page that floods its server with
// requests costs itself its early log lines, never the control channel or the sandbox's memory.
const SERVER_LOG_BYTES = 256 * 1024;

// Same flags as the local backend's launch, plus belt-and-braces egress denial inside the browser:
// every non-loopback URL goes to the CDN mirror (which answers the CDNs and refuses the rest), no
// name resolution, no non-proxied UDP (WebRTC). The mirror's certificate is self-signed.
const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu",
  // What Playwright adds to the headless Chromium it launches (the local backend), so both backends
  // render alike: no scrollbars (mobile's overlay ones fade in and out: no two screenshots alike) and
  // a mouse-like pointer for (hover) and (pointer) media queries.
  "--hide-scrollbars",
  "--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4",
  // DevTools on file descriptors 3 and 4, not on a loopback port anything in the sandbox could connect to.
  "--remote-debugging-pipe",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-default-apps", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
  "--autoplay-policy=no-user-gesture-required", "--force-color-profile=srgb",
  // Chromium's own background requests (search preconnects, autofill, network time, hints) would reach
  // the mirror and be recorded as the page's blocked requests; Playwright turns the same ones off.
  "--disable-field-trial-config", "--disable-extensions", "--disable-client-side-phishing-detection",
  "--disable-domain-reliability", "--no-pings", "--no-default-browser-check", "--metrics-recording-only",
  "--disable-features=OptimizationHints,NetworkTimeServiceQuerying,AimEnabled,PreconnectToSearch," +
    "AutofillServerCommunication,MediaRouter,Translate,InterestFeedContentSuggestions,LensOverlay",
  "--font-render-hinting=none", "--disable-breakpad", "--disable-crash-reporter",
  // navigator.webdriver false: a page must not learn from it that it is evaluated.
  "--disable-blink-features=AutomationControlled",
  `--proxy-server=http://127.0.0.1:${MIRROR_PORT}`, "--ignore-certificate-errors",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
];

const TYPES = {
  ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
  ".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
  ".webp": "image/webp", ".ico": "image/x-icon", ".txt": "text/plain; charset=utf-8", ".wasm": "application/wasm",
  ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".mp3": "audio/mpeg", ".wav": "audio/wav",
};

fs.mkdirSync(STATE, { recursive: true, mode: 0o700 });
fs.chmodSync(STATE, 0o700);

function note(line) {
  try {
    fs.appendFileSync(path.join(STATE, "sandboxd.log"), `${new Date().toISOString()} ${line}\n`);
  } catch {
    // a full /tmp must not take the supervisor down
  }
}

// ---------------------------------------------------------------------------------- server log

const serverLog = { lines: [], bytes: 0, dropped: 0 };

function log(line) {
  serverLog.lines.push(line);
  serverLog.bytes += Buffer.byteLength(line) + 1;
  while (serverLog.bytes > SERVER_LOG_BYTES && serverLog.lines.length > 1) {
    serverLog.bytes -= Buffer.byteLength(serverLog.lines.shift()) + 1;
    serverLog.dropped += 1;
  }
}

// The log so far, and a fresh one for the next app.
function takeServerLog() {
  const taken = { log: serverLog.lines.join("\n"), dropped: serverLog.dropped };
  serverLog.lines = [];
  serverLog.bytes = 0;
  serverLog.dropped = 0;
  return taken;
}

// ---------------------------------------------------------------------------------- app server

// Any request a page can make must end in an answer, never in an exception: an uncaught one here
// would take the supervisor, and with it the sandbox, down (the app escaping its verdict). Only regular
// files under the app's root are served (lstat: a link is not followed, wherever it points).
function serve(req, res) {
  let rel;
  try {
    rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
  } catch {
    rel = null;
  }
  const file = rel === null || rel.includes("\0") ? null : path.normalize(path.join(APP_ROOT, rel));
  res.setHeader("Cache-Control", "no-store");
  const line = (status) => `"${req.method} ${String(req.url).slice(0, 300)} HTTP/${req.httpVersion}" ${status} -`;
  if (file === null || (file !== APP_ROOT && !file.startsWith(APP_ROOT + path.sep))) {
    log(line(400));
    res.writeHead(400, { "Content-Type": "text/plain" });
    res.end("bad request");
    return;
  }
  fs.lstat(file, (err, st) => {
    const target = !err && st.isDirectory() ? path.join(file, "index.html") : file;
    fs.lstat(target, (statErr, info) => {
      if (statErr || !info.isFile()) {
        log(line(404));
        res.writeHead(404, { "Content-Type": "text/plain" });
        res.end("not found");
        return;
      }
      fs.readFile(target, (readErr, body) => {
        log(line(readErr ? 404 : 200));
        if (readErr) {
          res.writeHead(404, { "Content-Type": "text/plain" });
          res.end("not found");
          return;
        }
        res.writeHead(200, { "Content-Type": TYPES[path.extname(target).toLowerCase()] || "application/octet-stream" });
        res.end(body);
      });
    });
  });
}

const server = http.createServer((req, res) => {
  try {
    serve(req, res);
  } catch {
    try {
      res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("server error");
    } catch {
      // the response was already under way
    }
  }
});
server.on("clientError", (_err, socket) => socket.destroy());
server.listen(APP_PORT, "127.0.0.1");

// ---------------------------------------------------------------------------------- sound

// The page's sound: a private PulseAudio daemon with one null sink ("evalgrid"); the driver records
// its monitor with `docker exec ... parec` (evaluator/evidence/soundtrack.py). Everything lives under
// PULSE_DIR because the root filesystem is read-only. Flags as measured there: no realtime or
// shm (no capabilities, tiny /dev/shm), norewinds so a new recording gets data at once.
function startAudio(onReady) {
  for (const sub of ["home", "config", "state", "run"]) fs.mkdirSync(path.join(PULSE_DIR, sub), { recursive: true });
  fs.chmodSync(PULSE_DIR, 0o700);
  const env = {
    ...process.env, HOME: path.join(PULSE_DIR, "home"), XDG_CONFIG_HOME: path.join(PULSE_DIR, "config"),
    XDG_RUNTIME_DIR: path.join(PULSE_DIR, "run"), PULSE_RUNTIME_PATH: path.join(PULSE_DIR, "run"),
    PULSE_STATE_PATH: path.join(PULSE_DIR, "state"),
  };
  const daemon = spawn("pulseaudio", [
    "--daemonize=no", "-n", "--exit-idle-time=-1", "--use-pid-file=no", "--realtime=no", "--high-priority=no",
    "--disable-shm=yes", "--log-target=stderr", "--log-level=error",
    "--load=module-null-sink sink_name=evalgrid rate=48000 channels=2 norewinds=1",
    `--load=module-native-protocol-unix socket=${PULSE_SOCKET} auth-anonymous=1 auth-cookie-enabled=0`,
  ], { env, stdio: ["ignore", "ignore", fs.openSync(path.join(STATE, "pulseaudio.log"), "a")] });
  daemon.on("error", () => {});
  daemon.on("exit", () => setTimeout(() => startAudio(() => {}), 500));
  const started = Date.now();
  const probe = () => {
    const socket = net.connect(PULSE_SOCKET);
    socket.on("connect", () => { socket.destroy(); onReady(); });
    socket.on("error", () => {
      // Without sound the sandbox still works: Chromium just has no audio device.
      if (Date.now() - started > 5000) onReady(); else setTimeout(probe, 20);
    });
  };
  probe();
}

// ---------------------------------------------------------------------------------- the browser

// One DevTools client at a time, and each client gets a Chromium no earlier client has touched: when a
// client goes, its Chromium goes too (the contexts it made, its attached sessions), and a new one starts.
const browserState = { child: null, starts: 0, client: null, used: false, waiting: [] };

function startBrowser() {
  const profile = path.join(STATE, "chrome");
  fs.rmSync(profile, { recursive: true, force: true });
  const child = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, "about:blank"], {
    env: { ...process.env, PULSE_SERVER: `unix:${PULSE_SOCKET}`, PULSE_SINK: "evalgrid" },
    stdio: ["ignore", "ignore", fs.openSync(path.join(STATE, "chromium.log"), "a"), "pipe", "pipe"],
  });
  browserState.child = child;
  browserState.starts += 1;
  browserState.used = false;
  child.stdio[3].on("error", () => {});
  child.stdio[4].on("error", () => {});
  child.on("error", (err) => note(`chromium: ${err.message}`));
  child.on("exit", () => {
    // A crashed or killed browser is brought back; its client sees the dropped connection and connects
    // again (the run that was on it is retried or scored by the worker's rules).
    if (browserState.child === child) browserState.child = null;
    const client = browserState.client;
    if (client && client.browser === child) client.socket.destroy();
    setTimeout(startBrowser, 200);
  });
  const waiting = browserState.waiting.splice(0);
  for (const socket of waiting) attachDevtools(socket);
}

// A DevTools client: bytes in go to Chromium's fd 3, Chromium's fd 4 comes back out (messages are
// NUL-terminated JSON; the driver's bridge turns them into WebSocket frames for Playwright).
function attachDevtools(socket) {
  if (socket.destroyed) return;
  socket.pause(); // nothing may be read before it can go to a browser
  socket.on("error", () => socket.destroy());
  const previous = browserState.client;
  if (previous && previous.socket !== socket) previous.socket.destroy();
  const child = browserState.child;
  if (!child || browserState.used) {
    // No browser yet, or one an earlier client used: a fresh one first (its start attaches this socket).
    browserState.waiting.push(socket);
    if (child) child.kill("SIGKILL");
    return;
  }
  browserState.used = true;
  const client = { socket, browser: child };
  browserState.client = client;
  const input = child.stdio[3];
  const output = child.stdio[4];
  const toClient = (data) => socket.write(data);
  socket.on("data", (data) => input.write(data));
  output.on("data", toClient);
  socket.resume();
  socket.on("close", () => {
    output.removeListener("data", toClient);
    if (browserState.client === client) {
      browserState.client = null;
      if (browserState.child === child) child.kill("SIGKILL");
    }
  });
}

// ---------------------------------------------------------------------------------- the CDN mirror

// The offline CDN mirror runs as a process of its own (mirror.js): package code must never run inside the
// supervisor, and the mirror never requires any (CommonJS export names were indexed at image build).
const mirrorState = { ready: false };

function startMirror() {
  mirrorState.ready = false;
  const child = spawn(process.execPath, [path.join(__dirname, "mirror.js"), "--port", String(MIRROR_PORT),
    "--root", "/opt/evalgrid/mirror", "--cert", "/opt/evalgrid/mirror-cert.pem", "--key", "/opt/evalgrid/mirror-key.pem",
    "--index", "/opt/evalgrid/mirror-manifest.json", "--log", ops.MIRROR_LOG], {
    stdio: ["ignore", "pipe", fs.openSync(path.join(STATE, "mirror.stderr.log"), "a")],
  });
  child.on("error", (err) => note(`mirror: ${err.message}`));
  child.stdout.on("data", (data) => {
    if (String(data).includes("ready")) mirrorState.ready = true;
  });
  child.on("exit", (code, signal) => {
    note(`mirror exited (${code === null ? signal : code}); restarting`);
    mirrorState.ready = false;
    setTimeout(startMirror, 200);
  });
}

// ---------------------------------------------------------------------------------- the driver's ways in

const sandbox = {
  takeServerLog,
  attachDevtools,
  // Ready when a browser has started and the mirror listens: the first page the driver loads then finds
  // the mirror answering.
  ready: () => Boolean(browserState.child) && mirrorState.ready,
  browserStarts: () => browserState.starts,
};

// A Unix socket in the state directory: only the machinery's user can reach it (the directory is 0700).
function listenUnix(name, onConnection) {
  const file = path.join(STATE, `${name}.sock`);
  fs.rmSync(file, { force: true });
  const listener = net.createServer(onConnection);
  listener.on("error", (err) => note(`${name} socket: ${err.message}`));
  listener.listen(file, () => fs.chmodSync(file, 0o600));
}

listenUnix("control", (socket) => ops.serveControl(socket, sandbox));
listenUnix("devtools", attachDevtools);

startAudio(() => {
  startBrowser();
  setImmediate(startMirror);
});

if (process.env.EVALGRID_GATE_PORT) {
  require("./gate").startGate({
    port: Number(process.env.EVALGRID_GATE_PORT), tokenFile: process.env.EVALGRID_GATE_TOKEN_FILE || "",
    pulseServer: `unix:${PULSE_SOCKET}`, sandbox, log: note,
  });
}

// The supervisor outlives its own bugs: a crash here would end the sandbox for every later run.
process.on("uncaughtException", (err) => note(String(err && err.stack)));

for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    if (browserState.child) browserState.child.kill("SIGKILL");
    process.exit(0);
  });
}
