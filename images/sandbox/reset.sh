#!/bin/sh
# Between runs: kill whatever the previous app started (dev servers, strays), drop its files, and
# unpack the next app from stdin. Kept alive: init, the supervisor, Chromium, evalgrid's own bridges.
set -eu
keep="$(cat /tmp/evalgrid/sandboxd.pid 2>/dev/null || echo 0)"
for dir in /proc/[0-9]*; do
  pid="${dir#/proc/}"
  [ "$pid" = 1 ] || [ "$pid" = "$$" ] || [ "$pid" = "$keep" ] && continue
  cmd="$(tr '\0' ' ' < "$dir/cmdline" 2>/dev/null || true)"
  case "$cmd" in
    ""|/usr/lib/chromium/*|/usr/bin/chromium*|*/opt/evalgrid/*|/bin/sh\ /opt/evalgrid/*) continue ;;
  esac
  kill -9 "$pid" 2>/dev/null || true
done
find /srv/app -mindepth 1 -delete
: > /tmp/evalgrid/server.log
tar -x -C /srv/app
