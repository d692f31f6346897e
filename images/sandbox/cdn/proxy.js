'use strict';
// The proxy Chromium is pointed at: plain HTTP requests and CONNECT tunnels, whose TLS it terminates with
// its own certificate, answered by the host's grammar (grammars.js) for the hosts the mirror knows and
// refused for every other. Every answer is logged.

const fs = require('fs');
const http = require('http');
const path = require('path');
const stream = require('stream');
const tls = require('tls');
const { HOSTS } = require('./grammars');
const { Mirror, safeJoin } = require('./packages');

// Capped: a page that polls a refused host must not fill /tmp or the driver's reply with its log.
const LOG_LIMIT_BYTES = 2 * 1024 * 1024;

// Chromium's own background traffic (component updates, GCM, autofill, search preconnects) that its
// flags do not all turn off: refused like any other, but not recorded as the page's requests.
const CHROMIUM_SERVICES = /^(?:[\w-]+\.clients\.google\.com|clients\d*\.google\.com|www\.google\.com|accounts\.google\.com|(?:content-autofill|update|safebrowsing|optimizationguide-pa|clientservices)\.googleapis\.com|redirector\.gvt1\.com)$/;

function blockedKind(hostname) {
  return CHROMIUM_SERVICES.test(hostname) ? 'browser' : 'blocked';
}

const TYPES = {
  '.js': 'application/javascript; charset=utf-8',
  '.mjs': 'application/javascript; charset=utf-8',
  '.cjs': 'application/javascript; charset=utf-8',
  '.jsx': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.scss': 'text/plain; charset=utf-8',
  '.less': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const contentType = (rel) => TYPES[path.extname(rel).toLowerCase()] || 'text/plain; charset=utf-8';

const CORS = { 'Access-Control-Allow-Origin': '*', 'Timing-Allow-Origin': '*' };

function startMirror({ port, root, certFile, keyFile, logFile, indexFile }) {
  const mirror = new Mirror(root, indexFile ? JSON.parse(fs.readFileSync(indexFile, 'utf8')) : null);
  const secureContext = tls.createSecureContext({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) });
  const log = appendLog(logFile);
  const tunnelHost = new WeakMap(); // TLS socket → the host its CONNECT named

  // Requests arriving inside TLS tunnels: HTTP over the decrypted socket.
  const inner = http.createServer((req, res) => {
    const host = tunnelHost.get(req.socket) || '';
    safely(res, () => answer(mirror, log, req, res, 'https', host));
  });
  inner.on('clientError', (_err, socket) => socket.destroy());

  const proxy = http.createServer((req, res) => {
    safely(res, () => {
      if (req.url.startsWith('/')) return fail(res, 400, 'this is a proxy: send absolute URLs or CONNECT');
      return answer(mirror, log, req, res, 'http', '');
    });
  });
  proxy.on('clientError', (_err, socket) => socket.destroy());
  proxy.on('connect', (req, socket, head) => {
    const tunnel = openTunnel(req, socket, head, secureContext, log);
    if (!tunnel) return;
    tunnelHost.set(tunnel.secure, tunnel.host);
    inner.emit('connection', tunnel.secure);
  });

  return new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(port, '127.0.0.1', () => {
      proxy.removeListener('error', reject);
      proxy.on('error', () => {});
      resolve({ server: proxy, mirror, close: () => new Promise((done) => proxy.close(() => done())) });
    });
  });
}

// The log as a function of one record; none without a file.
function appendLog(logFile) {
  return (record) => {
    if (!logFile) return;
    try {
      if (fs.statSync(logFile, { throwIfNoEntry: false })?.size > LOG_LIMIT_BYTES) return;
      fs.appendFileSync(logFile, JSON.stringify(record) + '\n');
    } catch {
      // a full or vanished log must not take the proxy down with it
    }
  };
}

// A CONNECT to a mirrored host on 443 → {secure: the tunnel's TLS socket, host}; any other is refused (null).
function openTunnel(req, socket, head, secureContext, log) {
  socket.on('error', () => socket.destroy());
  const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(req.url || '');
  const host = m ? m[1].toLowerCase() : '';
  if (!Object.hasOwn(HOSTS, host) || (m[2] && m[2] !== '443')) {
    log({ kind: blockedKind(host), url: `https://${host.slice(0, 256)}/` });
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return null;
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head && head.length) socket.unshift(head);
  const secure = new tls.TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
  secure.on('error', () => secure.destroy());
  return { secure, host };
}

// One request, to `host` when it came through a tunnel: refused, or answered by its host's handler.
function answer(mirror, log, req, res, scheme, host) {
  let target;
  try {
    target = new URL(req.url.startsWith('/') ? `${scheme}://${host}${req.url}` : req.url);
  } catch {
    return fail(res, 400, 'bad request URL');
  }
  const hostname = target.hostname.toLowerCase();
  const url = target.href.slice(0, 2048);
  const handler = Object.hasOwn(HOSTS, hostname) ? HOSTS[hostname] : undefined;
  if (!handler || (scheme === 'https' && hostname !== host)) {
    log({ kind: blockedKind(hostname), url });
    return fail(res, 403, `${hostname} is not reachable from the sandbox`, { 'X-Evalgrid-Blocked': '1' });
  }
  let pathname;
  try {
    pathname = decodeURIComponent(target.pathname);
  } catch {
    log({ kind: 'miss', url, reason: 'undecodable path' });
    return fail(res, 400, 'undecodable path');
  }
  const ctx = { url, origin: `${target.protocol}//${target.host}`, path: pathname, search: target.search, query: target.searchParams };
  let result;
  try {
    result = handler(mirror, ctx, log);
  } catch (err) {
    result = { miss: `mirror error: ${err && err.message}` };
  }
  return send(req, res, url, result, log);
}

// A handler's result (grammars.js lists the kinds) as the response, and its record in the log.
function send(req, res, url, result, log) {
  if (result.redirect) return sendRedirect(res, url, result, log);
  if (result.body !== undefined) return sendBody(req, res, url, result, log);
  const size = result.file ? fileSize(result.file) : null;
  if (size !== null) return sendFile(req, res, url, result, size, log);
  const reason = result.file ? `${result.file.rel} vanished` : result.miss;
  log({ kind: 'miss', url, reason });
  return fail(res, 404, reason);
}

function sendRedirect(res, url, result, log) {
  const record = { kind: 'served', url, package: `${result.pkg.name}@${result.pkg.version}`, redirect: result.redirect };
  if (result.note) record.note = result.note;
  log(record);
  res.writeHead(302, { ...CORS, Location: result.redirect, 'Cache-Control': 'public, max-age=600', 'Content-Length': 0 });
  res.end();
}

function sendBody(req, res, url, result, log) {
  const body = Buffer.from(result.body);
  log({ kind: 'served', url, package: result.pkg });
  res.writeHead(200, { ...CORS, 'Content-Type': result.type, 'Content-Length': body.length,
    'Cache-Control': result.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=86400' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function fileSize({ pkg, rel }) {
  try {
    return fs.statSync(safeJoin(pkg.dir, rel)).size;
  } catch {
    return null;
  }
}

function sendFile(req, res, url, result, size, log) {
  const { pkg, rel } = result.file;
  const record = { kind: 'served', url, package: `${pkg.name}@${pkg.version}`, file: rel };
  if (result.note) record.note = result.note;
  log(record);
  res.writeHead(200, {
    ...CORS,
    'Content-Type': contentType(rel),
    'Content-Length': size,
    'Cache-Control': result.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600',
  });
  if (req.method === 'HEAD') res.end();
  // pipeline, not pipe: a page that aborts the download must not leave the file open.
  else stream.pipeline(fs.createReadStream(safeJoin(pkg.dir, rel)), res, () => {});
}

function fail(res, status, message, extra = {}) {
  const body = Buffer.from(`${message}\n`);
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length, 'Access-Control-Allow-Origin': '*', ...extra });
  res.end(body);
}

function safely(res, fn) {
  try {
    fn();
  } catch (err) {
    try {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`mirror error: ${err && err.message}\n`);
    } catch {
      res.destroy();
    }
  }
}

module.exports = { startMirror };
