// The Kubernetes backend's way in: one TCP port on the pod's network, reachable (by NetworkPolicy)
// only from evalgrid's worker pods, and useless without the sandbox's token.
//
// A connection starts with one JSON line, {"token": ..., "channel": ...}; then, by channel:
//   control   the supervisor's control operations (ops.js), as over the Docker backend's relay;
//   devtools  Chromium's DevTools pipe (NUL-terminated JSON messages), as over the relay;
//   audio     the PulseAudio monitor as raw s16le on the socket (parec, with the client's options).
// The token is read from a file only the machinery's user can read (the pod's downward-API volume), never
// from the environment, where /proc/<pid>/environ would keep it for the container's life.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const net = require("net");
const { spawn } = require("child_process");
const { serveControl } = require("./ops");

const HANDSHAKE_LIMIT = 4096;
const HANDSHAKE_TIMEOUT_MS = 5000;

function sameToken(given, expected) {
  const a = Buffer.from(String(given));
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
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

function startGate({ port, tokenFile, pulseServer, sandbox, log }) {
  const token = tokenFile ? fs.readFileSync(tokenFile, "utf8").trim() : "";
  if (token.length < 32) throw new Error("the gate needs its token file (EVALGRID_GATE_TOKEN_FILE, 32 characters or more)");
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
      if (rest.length) socket.unshift(rest);
      // (devtools resumes the socket itself, once a browser is there to read what it sends)
      if (request.channel === "devtools") return sandbox.attachDevtools(socket);
      if (request.channel === "control") serveControl(socket, sandbox);
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
