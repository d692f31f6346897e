// The Kubernetes backend's way in: one TCP port on the pod's network, reachable (by NetworkPolicy)
// only from evalgrid's worker pods, and useless without the sandbox's token.
//
// A connection starts with one JSON line, {"token": ..., "channel": ...}; then, by channel:
//   control   JSON request lines in, JSON reply lines out (ops.js), as `control.js` over docker exec;
//   devtools  raw bytes to and from Chromium's DevTools port, which headless Chromium binds to
//             127.0.0.1 inside the pod whatever --remote-debugging-address says;
//   audio     the PulseAudio monitor as raw s16le on the socket (parec, with the client's options).
// Runs inside the supervisor, so the control channel needs no new process after a fork bomb.
"use strict";

const crypto = require("crypto");
const net = require("net");
const { spawn } = require("child_process");
const { serveLines } = require("./ops");

const HANDSHAKE_LIMIT = 4096;
const HANDSHAKE_TIMEOUT_MS = 5000;

function sameToken(given, expected) {
  const a = Buffer.from(String(given));
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function control(socket, rest) {
  serveLines(socket, (reply) => socket.write(reply));
  if (rest.length) socket.unshift(rest);
}

function devtools(socket, rest, devtoolsPort) {
  const upstream = net.connect(devtoolsPort, "127.0.0.1");
  upstream.on("error", () => socket.destroy());
  socket.on("error", () => upstream.destroy());
  socket.on("close", () => upstream.destroy());
  upstream.on("close", () => socket.destroy());
  if (rest.length) upstream.write(rest);
  socket.pipe(upstream);
  upstream.pipe(socket);
}

function audio(socket, request, pulseServer) {
  const args = Array.isArray(request.args) ? request.args.map(String) : [];
  if (args.some((a) => !a.startsWith("--"))) {
    socket.destroy();
    return;
  }
  const recorder = spawn("parec", args, {
    env: { ...process.env, PULSE_SERVER: pulseServer }, stdio: ["ignore", "pipe", "ignore"],
  });
  recorder.on("error", () => socket.destroy());
  recorder.on("exit", () => socket.end());
  recorder.stdout.pipe(socket);
  const stop = () => { try { recorder.kill("SIGKILL"); } catch { /* gone */ } };
  socket.on("close", stop);
  socket.on("error", stop);
}

function startGate({ port, token, devtoolsPort, pulseServer, log }) {
  if (!token || token.length < 32) throw new Error("the gate needs EVALGRID_GATE_TOKEN (32 characters or more)");
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HANDSHAKE_TIMEOUT_MS);
    const onData = (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf(10);
      if (end < 0) {
        if (buffered.length > HANDSHAKE_LIMIT) socket.destroy();
        return;
      }
      socket.removeListener("data", onData);
      socket.pause();
      clearTimeout(timer);
      let request;
      try {
        request = JSON.parse(buffered.subarray(0, end).toString("utf8"));
      } catch {
        request = {};
      }
      const rest = buffered.subarray(end + 1);
      if (!sameToken(request.token, token)) {
        log(`gate: refused a connection from ${socket.remoteAddress} (bad token)`);
        socket.destroy();
        return;
      }
      if (request.channel === "control") control(socket, rest);
      else if (request.channel === "devtools") devtools(socket, rest, devtoolsPort);
      else if (request.channel === "audio") audio(socket, request, pulseServer);
      else socket.destroy();
      socket.resume();
    };
    socket.on("data", onData);
    socket.on("error", () => {});
  });
  server.on("error", (err) => log(`gate: ${err.message}`));
  server.listen(port, "0.0.0.0");
  return server;
}

module.exports = { startGate };
