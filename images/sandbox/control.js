// The Docker backend's control channel: one long-lived `docker exec -i ... node control.js` per
// container, one JSON request per line on stdin and one JSON reply per line on stdout (ops.js).
"use strict";

const readline = require("readline");
const { handleLine } = require("./ops");

readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
  process.stdout.write(handleLine(line) + "\n");
});
