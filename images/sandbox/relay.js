// The Docker backend's way in: `docker exec --user 10001 -i <sandbox> node relay.js control|devtools`
// joins this process's stdin and stdout to one of the supervisor's Unix sockets (sandboxd.js), which only
// the machinery's user can open. One exec session is one control channel or one DevTools connection.
"use strict";

const net = require("net");
const path = require("path");

const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
// A sandbox the driver has just started may not have made its sockets yet: wait for them this long.
const WAIT_MS = 15000;
const channel = process.argv[2];
if (channel !== "control" && channel !== "devtools") {
  process.stderr.write("usage: node relay.js control|devtools\n");
  process.exit(2);
}
const file = path.join(STATE, `${channel}.sock`);
const started = Date.now();

function connect() {
  const socket = net.connect(file);
  let connected = false;
  socket.once("connect", () => {
    connected = true;
    socket.on("close", () => process.exit(0));
    process.stdin.on("end", () => socket.end());
    process.stdin.pipe(socket);
    socket.pipe(process.stdout);
  });
  socket.on("error", (err) => {
    if (connected) {
      process.stderr.write(`relay: ${err.message}\n`);
      process.exit(1);
    }
    if ((err.code === "ENOENT" || err.code === "ECONNREFUSED") && Date.now() - started < WAIT_MS) {
      setTimeout(connect, 20);
      return;
    }
    process.stderr.write(`relay: ${err.message}\n`);
    process.exit(1);
  });
}

connect();
