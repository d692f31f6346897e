// evalgrid sandbox supervisor: serves the app on loopback and keeps one headless Chromium alive.
//
// Runs as PID 2 under tini, as an unprivileged user, in a container with no network at all
// (--network none). The driver outside reaches Chromium's DevTools port only through
// `docker exec -i ... node pipe.js`, so nothing inside can open a connection to the outside.
// As a Kubernetes pod (EVALGRID_GATE_PORT set) the pod has a network interface, with every egress
// denied by a NetworkPolicy; the driver then comes in through the token-guarded gate (gate.js).
"use strict";

const fs = require("fs");
const http = require("http");
const net = require("net");
const path = require("path");
const { spawn } = require("child_process");

const APP_ROOT = "/srv/app";
const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
const APP_PORT = 8080;
const DEVTOOLS_PORT = 9222;
const MIRROR_PORT = 8079;
const CHROMIUM = process.env.EVALGRID_CHROMIUM || "/usr/bin/chromium";
const PULSE_DIR = path.join(STATE, "pulse");
const PULSE_SOCKET = path.join(PULSE_DIR, "pulse.sock");
const OWN_CHILDREN = path.join(STATE, "own-children");
// Read once and dropped from the environment, so Chromium, PulseAudio and app processes never inherit it.
const token = process.env.EVALGRID_GATE_TOKEN || "";
delete process.env.EVALGRID_GATE_TOKEN;

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
  `--remote-debugging-port=${DEVTOOLS_PORT}`, "--remote-debugging-address=127.0.0.1",
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

fs.mkdirSync(STATE, { recursive: true });
fs.writeFileSync(path.join(STATE, "sandboxd.pid"), String(process.pid));
const serverLog = path.join(STATE, "server.log");

function log(line) {
  fs.appendFile(serverLog, line + "\n", () => {});
}

// The children this supervisor runs for itself; a reset (ops.js) kills every other process.
const own = { audio: null, browser: null };
function recordOwnChildren() {
  const pids = Object.values(own).filter((child) => child && child.pid).map((child) => child.pid);
  fs.writeFileSync(OWN_CHILDREN + ".tmp", pids.join("\n"));
  fs.renameSync(OWN_CHILDREN + ".tmp", OWN_CHILDREN);
}

// Any request a page can make must end in an answer, never in an exception: an uncaught one here
// would take the supervisor, and with it the sandbox, down (the app escaping its verdict).
function serve(req, res) {
  let rel;
  try {
    rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
  } catch {
    rel = null;
  }
  const file = rel === null || rel.includes("\0") ? null : path.normalize(path.join(APP_ROOT, rel));
  res.setHeader("Cache-Control", "no-store");
  if (file === null || (file !== APP_ROOT && !file.startsWith(APP_ROOT + path.sep))) {
    log(`"${req.method} ${String(req.url).slice(0, 300)} HTTP/${req.httpVersion}" 400 -`);
    res.writeHead(400, { "Content-Type": "text/plain" });
    res.end("bad request");
    return;
  }
  fs.stat(file, (err, st) => {
    const target = !err && st.isDirectory() ? path.join(file, "index.html") : file;
    fs.readFile(target, (readErr, body) => {
      log(`"${req.method} ${String(req.url).slice(0, 300)} HTTP/${req.httpVersion}" ${readErr ? 404 : 200} -`);
      if (readErr) {
        res.writeHead(404, { "Content-Type": "text/plain" });
        res.end("not found");
        return;
      }
      res.writeHead(200, { "Content-Type": TYPES[path.extname(target).toLowerCase()] || "application/octet-stream" });
      res.end(body);
    });
  });
}

const server = http.createServer((req, res) => {
  try {
    serve(req, res);
  } catch (err) {
    try {
      res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("server error");
    } catch {
      // the response was already under way
    }
  }
});
server.listen(APP_PORT, "127.0.0.1");

// The page's sound: a private PulseAudio daemon with one null sink ("evalgrid"); the driver records
// its monitor with `docker exec ... parec` (evaluator/soundtrack.py). Everything lives under
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
  own.audio = daemon;
  recordOwnChildren();
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

let browser = null;
let restarts = 0;

function startBrowser() {
  const profile = path.join(STATE, "chrome");
  fs.rmSync(profile, { recursive: true, force: true });
  browser = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, "about:blank"], {
    env: { ...process.env, PULSE_SERVER: `unix:${PULSE_SOCKET}`, PULSE_SINK: "evalgrid" },
    stdio: ["ignore", "ignore", fs.openSync(path.join(STATE, "chromium.log"), "a")],
  });
  own.browser = browser;
  recordOwnChildren();
  browser.on("exit", (code, signal) => {
    // A crashed or killed browser is brought back; the driver sees the dropped connection and
    // retries the run (an infrastructure failure, not the app's result).
    restarts += 1;
    fs.writeFileSync(path.join(STATE, "browser-restarts"), String(restarts));
    setTimeout(startBrowser, 200);
  });
}
// The offline CDN mirror; ops.js empties its log with each new app and hands it to the driver.
// Indexing it takes ~150 ms of the sandbox's one CPU, so it starts once Chromium is under way; the
// driver's first request (ops.js `devtools`) waits for both to listen.
function startMirror() {
  require("./mirror").startMirror({
    port: MIRROR_PORT, root: "/opt/evalgrid/mirror", certFile: "/opt/evalgrid/mirror-cert.pem",
    keyFile: "/opt/evalgrid/mirror-key.pem", logFile: path.join(STATE, "mirror.log"),
  }).catch((err) => {
    // The sandbox then never reports ready (ops.js `devtools` waits for the mirror): its pages would
    // fail at the proxy and be scored as the app's failures.
    fs.appendFileSync(path.join(STATE, "sandboxd.log"), `${new Date().toISOString()} mirror: ${err && err.stack}\n`);
  });
}

startAudio(() => {
  startBrowser();
  setImmediate(startMirror);
});

if (process.env.EVALGRID_GATE_PORT) {
  require("./gate").startGate({
    port: Number(process.env.EVALGRID_GATE_PORT), token, devtoolsPort: DEVTOOLS_PORT,
    pulseServer: `unix:${PULSE_SOCKET}`, log,
  });
}

// The supervisor outlives its own bugs: a crash here would end the sandbox for every later run.
process.on("uncaughtException", (err) => {
  fs.appendFileSync(path.join(STATE, "sandboxd.log"), `${new Date().toISOString()} ${err && err.stack}\n`);
});

for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    if (browser) browser.kill("SIGKILL");
    process.exit(0);
  });
}
