// The Docker backend's control channel: one long-lived `docker exec -i ... node control.js` per
// container, one JSON request per line on stdin and one JSON reply per line on stdout (ops.js).
"use strict";

const { serveLines } = require("./ops");

serveLines(process.stdin, (reply) => process.stdout.write(reply));
