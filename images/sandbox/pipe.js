// Bridges this process's stdin/stdout to a loopback TCP port inside the sandbox (DevTools).
"use strict";
const net = require("net");
const port = Number(process.argv[2] || 9222);
const socket = net.connect(port, "127.0.0.1");
socket.on("error", (err) => {
  process.stderr.write(`pipe: ${err.message}\n`);
  process.exit(1);
});
socket.on("close", () => process.exit(0));
process.stdin.on("end", () => socket.end());
process.stdin.pipe(socket);
socket.pipe(process.stdout);
