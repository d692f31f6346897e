#!/usr/bin/env bash
# evalgrid doctor: is this host ready for `make demo` / `make test`, and if not, what to do.
#
#   bash cluster/doctor.sh [--for demo|test] [--root CHECKOUT]
#
# Plain shell on purpose: `make demo` and `make test` run it first, before the venv exists, so a host
# that cannot work says why in the first lines instead of minutes into a build. `evalgrid doctor` runs
# this same file (package data), so the two reports cannot drift apart.
#
# One line a tool: ok, "setup" (missing, and `make setup` will install or start it), warn (works, but
# untested or short), FAIL (set-up cannot succeed as things are; the line says what to do).
# Exit status 1 when any line is FAIL.
set -uo pipefail

purpose=test
root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --for) purpose="${2:?--for needs demo or test}"; shift 2 ;;
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: doctor.sh [--for demo|test] [--root CHECKOUT]" >&2; exit 2 ;;
  esac
done
case "$purpose" in demo|test) ;; *) echo "error: --for takes demo or test, not '$purpose'" >&2; exit 2 ;; esac
if [ -z "$root" ] && [ -x images/source-hash.sh ]; then root="$PWD"; fi

# The image's Python (bookworm's python3): the worker image installs wheels the venv's pip built.
IMAGE_PYTHON=3.11
NEED_GB=12    # debootstrap base, sandbox and worker images, the venvs and npm trees, measured ≈ 10 GiB
WARN_GB=20

failures=0
is_root=false; [ "$(id -u)" = 0 ] && is_root=true
can_apt=false; command -v apt-get >/dev/null 2>&1 && can_apt=true

line() {  # line STATUS NAME FOUND [ADVICE]
  printf '%-6s %-14s %-34s %s\n' "$1" "$2" "$3" "${4:-}"
  if [ "$1" = FAIL ]; then failures=$((failures + 1)); fi
}

# A Debian package `make setup` installs when it is missing: fine as root with apt, a failure otherwise.
missing() {  # missing NAME PACKAGE
  if $is_root && $can_apt; then
    line setup "$1" "not installed" "make setup installs Debian's $2"
  else
    line FAIL "$1" "not installed" "install Debian's $2 (or run make setup as root)"
  fi
}

major() { printf '%s' "${1#v}" | cut -d. -f1; }
# version_ge A B: A >= B for dotted versions
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

echo "evalgrid doctor (for make $purpose) on $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)"

# A program from a Debian package: its version when present, else what `make setup` does about it.
program() {  # program NAME PACKAGE VERSION-SHELL-COMMAND
  if command -v "$1" >/dev/null 2>&1; then line ok "$1" "$(sh -c "$3" 2>/dev/null | head -1)"; else missing "$1" "$2"; fi
}

# Chromium: Debian's package; Playwright cannot download its own browser here.
program chromium chromium "chromium --version | awk '{print \$1, \$2}'"
program ffmpeg ffmpeg "ffmpeg -version | awk 'NR == 1 {print \$3}'"

# The Docker engine: installed, running, and reachable by this user.
if ! command -v dockerd >/dev/null 2>&1 && ! docker info >/dev/null 2>&1; then
  missing docker docker.io
else
  server="$(docker info --format '{{.ServerVersion}}' 2>&1)"
  if [ $? -eq 0 ] && [ -n "$server" ]; then
    line ok docker "engine $server"
  elif printf '%s' "$server" | grep -qi 'permission denied'; then
    line FAIL docker "no access to the engine" "add this user to the docker group, or run as root"
  elif $is_root; then
    line setup docker "engine not running" "make docker starts dockerd"
  else
    line FAIL docker "engine not running" "start dockerd (as root: make docker)"
  fi
fi

# node and npm: the sandbox's npm trees are installed on the host with `npm ci` from complete locks,
# which npm 9, 10 and 11 all install alike (images/sandbox/npm-tree.sh). npm 11 needs Node >= 20.17.
if command -v node >/dev/null 2>&1; then
  node_v="$(node --version 2>/dev/null)"
  if [ "$(major "$node_v")" -ge 18 ] 2>/dev/null; then
    line ok node "$node_v"
  else
    line FAIL node "$node_v" "Node >= 18 is needed (Debian bookworm's 18.20.4 works)"
  fi
else
  node_v=""
fi
if command -v npm >/dev/null 2>&1; then
  npm_v="$(npm --version 2>/dev/null)"
  npm_major="$(major "$npm_v")"
  if [ -z "$npm_v" ]; then
    line FAIL npm "does not run" "npm 11 needs Node >= 20.17: upgrade Node or install npm 10 (npm i -g npm@10)"
  elif [ "$npm_major" -lt 9 ] 2>/dev/null; then
    line FAIL npm "$npm_v" "npm 9, 10 or 11 is needed (npm i -g npm@10)"
  elif [ "$npm_major" -ge 11 ] && [ -n "$node_v" ] && ! version_ge "${node_v#v}" 20.17.0; then
    line FAIL npm "$npm_v on Node $node_v" "npm 11 needs Node >= 20.17: upgrade Node or install npm 10"
  elif [ "$npm_major" -gt 11 ] 2>/dev/null; then
    line warn npm "$npm_v" "untested; npm 9, 10 and 11 are tested (npm i -g npm@11 if the build fails)"
  else
    line ok npm "$npm_v"
  fi
elif [ -n "$node_v" ]; then
  line FAIL npm "not installed (Node $node_v is)" "install npm 10 or 11 for this Node (npm i -g npm@10)"
else
  missing "node and npm" "nodejs and npm"
fi

program debootstrap debootstrap "dpkg-query -W -f '\${Version}' debootstrap || echo present"
program pulseaudio pulseaudio "pulseaudio --version | awk '{print \$2}'"

fonts="$(fc-list 2>/dev/null)"
for font in "Noto Sans CJK:fonts-noto-cjk" "Noto Color Emoji:fonts-noto-color-emoji"; do
  name="${font%%:*}"; package="${font##*:}"
  if grep -qi "$name" <<<"$fonts"; then line ok "font" "$name"; else missing "font $name" "$package"; fi
done

# Python: the venv's must be the image's, since the worker image installs wheels the venv built.
python="${PYTHON:-python3}"
host_py="$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)"
if [ -z "$host_py" ]; then
  line FAIL python "$python not found" "install Python >= 3.11 (Debian's python3 and python3-venv)"
elif ! version_ge "$host_py" 3.11; then
  line FAIL python "$host_py" "Python >= 3.11 is needed; set PYTHON=python3.11"
elif ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if $is_root && $can_apt; then line setup python "$host_py, no venv module" "install Debian's python3-venv"
  else line FAIL python "$host_py, no venv module" "install Debian's python3-venv"; fi
else
  line ok python "$host_py"
fi
if [ -n "$root" ] && [ -x "$root/.venv/bin/python" ]; then
  venv_py="$("$root/.venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"
else
  venv_py="${host_py%.*}"
fi
if [ -n "$venv_py" ] && [ "$venv_py" != "$IMAGE_PYTHON" ]; then
  advice="the worker image has Python $IMAGE_PYTHON: make clean, then make with PYTHON=python$IMAGE_PYTHON"
  if [ "$purpose" = test ]; then line FAIL "venv python" "$venv_py" "$advice"
  else line warn "venv python" "$venv_py" "$advice (only the worker image needs it)"; fi
elif [ -n "$venv_py" ]; then
  line ok "venv python" "$venv_py (the image's)"
fi

# Disk: where the checkout and Docker's images live.
docker_root="$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || true)"
[ -n "$docker_root" ] || docker_root=/var/lib/docker
for place in "${root:-$PWD}" "$docker_root"; do
  probe="$place"; while [ ! -e "$probe" ]; do probe="$(dirname "$probe")"; done
  free_gb=$(df -Pk "$probe" 2>/dev/null | awk 'NR==2 {printf "%d", $4 / 1048576}')
  if [ -z "$free_gb" ]; then line warn disk "$place: unknown"
  elif [ "$free_gb" -lt "$NEED_GB" ]; then line FAIL disk "$free_gb GiB free at $probe" "set-up needs about $NEED_GB GiB: free some"
  elif [ "$free_gb" -lt "$WARN_GB" ]; then line warn disk "$free_gb GiB free at $probe" "tight: runs' evidence needs room too"
  else line ok disk "$free_gb GiB free at $probe"; fi
done

# Images: is each built, and built from this checkout's sources?
if [ -z "$root" ]; then
  line warn images "not checked" "run from the checkout (or --root) to compare the images with their sources"
elif ! docker info >/dev/null 2>&1; then
  line setup images "engine not reachable" "make images builds them once the engine runs"
else
  for image in sandbox worker; do
    tag="evalgrid/$image:dev"
    label="$(docker image inspect --format '{{index .Config.Labels "evalgrid.source"}}' "$tag" 2>/dev/null)"
    if [ $? -ne 0 ]; then line setup "$image image" "not built" "make images builds it"; continue; fi
    want="$("$root/images/source-hash.sh" "$image" 2>/dev/null)"
    if [ -z "$want" ]; then line setup "$image image" "built, sources not hashable yet" "make venv, then doctor again"
    elif [ "$label" = "$want" ]; then line ok "$image image" "current ($want)"
    else line setup "$image image" "stale (${label:-no label})" "make images rebuilds it for $want"; fi
  done
fi

if [ "$failures" -gt 0 ]; then
  echo "doctor: $failures problem(s) above stop the set-up; fix the FAIL lines and run make doctor again" >&2
  exit 1
fi
echo "doctor: ready (lines marked setup are done by make setup)"
