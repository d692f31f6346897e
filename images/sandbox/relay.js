// The Docker backend's way in: `docker exec --user 10001 -i <sandbox> node relay.js control|devtools`
// joins this process's stdin and stdout to one of the supervisor's Unix sockets (sandboxd.js), which only
// the machinery's user can open. One exec session is one control channel or one DevTools connection.
"use strict";

const net = require("net");
const path = require("path");

const STATE = process.env.EVALGRID_STATE || "/tmp/evalgrid";
const channel = process.argv[2];
if (channel !== "control" && channel !== "devtools") {
  process.stderr.write("usage: node relay.js control|devtools\n");
  process.exit(2);
}
const socket = net.connect(path.join(STATE, `${channel}.sock`));
socket.on("error", (err) => {
  process.stderr.write(`relay: ${err.message}\n`);
  process.exit(1);
});
socket.on("close", () => process.exit(0));
process.stdin.on("end", () => socket.end());
process.stdin.pipe(socket);
socket.pipe(process.stdout);
