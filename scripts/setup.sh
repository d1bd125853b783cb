#!/usr/bin/env bash
# Sets up a fresh machine that has Node 20+ and npm: pnpm, the Debian packages the tests and demos
# use, the workspace's dependencies, a build, and the `soundclone` command. Safe to run again; it
# installs only what is missing.
#
# Packages are chosen by what a test needs (a driver, a codec, a model file), not by a command's
# presence: apt satisfies sox's "alsa | ao | oss | pulse" dependency with whichever one it picks, so
# a machine can have `sox` and still lack the ALSA driver a test records through. After installing,
# every capability is checked and setup stops with one clear line when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v pnpm >/dev/null 2>&1; then
  # Corepack's signature check fails on some machines; a global npm install always works.
  npm install -g pnpm@10
fi

arch_lib="/usr/lib/$(uname -m)-linux-gnu"

# path that proves the capability -> Debian package that brings it
declare -A wanted=(
  [/usr/bin/unshare]=util-linux          # refused-destination tests run in a private network namespace
  [/usr/bin/ip]=iproute2
  [/usr/bin/tar]=tar                     # the packed-artifact smoke test unpacks tarballs
  [/usr/bin/mkvmerge]=mkvtoolnix         # makes the multi-track Matroska files the upload tests read
  [/usr/bin/chromium]=chromium           # web-audio tests: real Chromium (playwright-core drives it)
  [/usr/bin/pulseaudio]=pulseaudio       # node-mic tests: a private daemon is the fake system microphone
  [/usr/bin/pactl]=pulseaudio-utils      # ... parec (capture fallback), paplay (speaks into the fake mic)
  [/usr/bin/arecord]=alsa-utils          # ... the arecord capture fallback
  [$arch_lib/alsa-lib/libasound_module_pcm_pulse.so]=libasound2-plugins  # ... ALSA's pulse plugin, which arecord records through
  [/usr/bin/tmux]=tmux                   # test/cli runs the CLI in a real terminal
  [/usr/bin/pocketsphinx_continuous]=pocketsphinx                     # real speech recognition in the reference server
  [/usr/share/pocketsphinx/model/en-us/en-us.lm.bin]=pocketsphinx-en-us   # ... its English model
  [/usr/include/pocketsphinx/pocketsphinx.h]=libpocketsphinx-dev        # ... headers for its Node-API binding
  [/usr/share/pocketsphinx/test/data/librivox/transcription]=pocketsphinx-testdata  # speech with known words
  [/usr/bin/cc]=gcc                      # ... the binding is compiled at setup (no node-gyp)
  [/usr/bin/pkg-config]=pkg-config       # ... which finds libpocketsphinx's flags
  [/usr/bin/sox]=sox                     # resamples recorded speech; a capture fallback
  [/usr/bin/espeak-ng]=espeak-ng         # the voice-gate bench (pnpm bench:vad) synthesizes its utterances
  [$arch_lib/sox/libsox_fmt_pulseaudio.so]=libsox-fmt-pulse  # ... sox's PulseAudio driver
  [$arch_lib/sox/libsox_fmt_alsa.so]=libsox-fmt-alsa         # ... sox's ALSA driver
  [/usr/lib/postgresql/15/bin/postgres]=postgresql  # the server's PostgreSQL store: tests start a throwaway one (cluster/local-postgres.ts)
  [/usr/lib/postgresql/15/bin/initdb]=postgresql
  [/usr/sbin/haproxy]=haproxy            # the round-robin balancer in front of a local cluster of nodes
  [/usr/bin/redis-server]=redis-server   # live realtime sessions that outlive their node: tests start a throwaway one (cluster/local-redis.ts)
)
missing=()
for path in "${!wanted[@]}"; do
  [ -e "$path" ] || missing+=("${wanted[$path]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    # Tests and the local cluster start their own PostgreSQL in a temporary directory on a free port;
    # the default cluster Debian would otherwise create (and start, on a machine with systemd) on 5432
    # is not wanted. createcluster.conf includes this directory.
    mkdir -p /etc/postgresql-common/createcluster.d
    [ -e /etc/postgresql-common/createcluster.d/soundclone.conf ] \
      || echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/soundclone.conf
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    echo "setup: please install these Debian packages: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')" >&2
    exit 1
  fi
fi

# What the tests use, asked of the programs themselves.
fail() { echo "setup: $1" >&2; exit 1; }
for path in "${!wanted[@]}"; do
  [ -e "$path" ] || fail "${wanted[$path]} is installed but $path is missing"
done
sox_drivers="$(sox -h 2>/dev/null | sed -n 's/^AUDIO DEVICE DRIVERS: //p')"
for driver in alsa pulseaudio; do
  [[ " $sox_drivers " == *" $driver "* ]] || fail "sox has no '$driver' driver (it lists: ${sox_drivers:-none}); install libsox-fmt-${driver%audio}"
done
sox -n -r 16000 -b 16 -c 1 -t wav - synth 0.01 sine 440 2>/dev/null | sox -t wav - -r 48000 -t raw - >/dev/null 2>&1 \
  || fail "sox cannot resample a WAV file"
chromium --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1 || fail "chromium does not start"
pulseaudio --version >/dev/null 2>&1 || fail "pulseaudio does not start"
haproxy -v >/dev/null 2>&1 || fail "haproxy does not start"
# PostgreSQL: a private server must initialise, start and answer, as the tests' own do (PostgreSQL
# refuses to run as root, so as root it runs as the postgres system user the package creates).
pg_check() {
  local bin=/usr/lib/postgresql/15/bin dir port as=()
  dir="$(mktemp -d /tmp/soundclone-setup-pg-XXXXXX)"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; as=(setpriv --reuid postgres --regid postgres --init-groups); fi
  # A port nothing listens on (asked of the system, not guessed).
  port="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync --no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; return 1; }
  "${as[@]}" "$bin/postgres" -D "$dir/data" -p "$port" -k "$dir" -c listen_addresses=127.0.0.1 >"$dir/server.log" 2>&1 &
  local pid=$! ok=1
  for _ in $(seq 1 100); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then ok=0; break; fi
    sleep 0.1
  done
  kill -INT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ "$ok" -eq 0 ] || cat "$dir/server.log" >&2
  rm -rf "$dir"
  return "$ok"
}
pg_check || fail "PostgreSQL 15 does not start a private server (initdb + postgres on 127.0.0.1)"
# Redis: a private server must start on a free port and answer PING, as the tests' own do (nothing saved).
redis_check() {
  local dir port pid ok=1 answer
  dir="$(mktemp -d /tmp/soundclone-setup-redis-XXXXXX)"
  port="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 50); do
    answer="$(node -e "const c = require('net').connect($port, '127.0.0.1', () => c.write('PING\\r\\n')); c.on('data', (d) => { process.stdout.write(String(d)); c.end(); }); c.on('error', () => process.exit(1)); setTimeout(() => process.exit(1), 500)" 2>/dev/null)" || true
    if [[ "$answer" == +PONG* ]]; then ok=0; break; fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ "$ok" -eq 0 ] || cat "$dir/server.log" >&2
  rm -rf "$dir"
  return "$ok"
}
redis_check || fail "redis-server does not start a private server on 127.0.0.1"

pnpm install --frozen-lockfile
# The reference server's PocketSphinx binding (packages/server/README.md); skipped with a notice when
# PocketSphinx is not installed (the server then uses its deterministic recognizer).
node packages/server/scripts/build-pocketsphinx.mjs --if-available
# Build once, so the `soundclone` command (pnpm soundclone, node_modules/.bin/soundclone) runs at once.
pnpm build
