#!/usr/bin/env bash
# Sets up a fresh machine that has Node 20+ and npm: pnpm, the Debian packages the tests and demos
# use, and the workspace's dependencies. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v pnpm >/dev/null 2>&1; then
  # Corepack's signature check fails on some machines; a global npm install always works.
  npm install -g pnpm@10
fi

# command -> Debian package. Tests that need them check for them too, with a clear message.
declare -A wanted=(
  [unshare]=util-linux   # refused-destination tests run in a private network namespace
  [ip]=iproute2
  [tar]=tar              # the packed-artifact smoke test unpacks tarballs
  [mkvmerge]=mkvtoolnix  # makes the multi-track Matroska files the upload tests read
  [chromium]=chromium    # web-audio tests: real Chromium (playwright-core drives /usr/bin/chromium)
  [pulseaudio]=pulseaudio       # node-mic tests: a private daemon is the fake system microphone
  [pactl]=pulseaudio-utils      # ... parec (capture fallback), paplay (speaks into the fake mic)
  [parec]=pulseaudio-utils
  [paplay]=pulseaudio-utils
  [arecord]=alsa-utils          # ... the arecord capture fallback (through ALSA's pulse plugin)
  [tmux]=tmux                   # test/cli runs the CLI in a real terminal
  [pocketsphinx_continuous]=pocketsphinx  # real speech recognition in the reference server
  [cc]=gcc                      # ... its Node-API binding is compiled at setup (no node-gyp)
  [pkg-config]=pkg-config       # ... which finds libpocketsphinx's flags
  [sox]=sox                     # test/recognition resamples recorded speech to 44.1 and 48 kHz
)
# file -> Debian package, for packages that bring no command (a model, headers, recordings).
declare -A wanted_files=(
  [/usr/share/pocketsphinx/model/en-us/en-us.lm.bin]=pocketsphinx-en-us
  [/usr/include/pocketsphinx/pocketsphinx.h]=libpocketsphinx-dev
  [/usr/share/pocketsphinx/test/data/librivox/transcription]=pocketsphinx-testdata  # speech with known words
  [/usr/lib/$(uname -m)-linux-gnu/sox/libsox_fmt_pulseaudio.so]=libsox-fmt-pulse  # sox capture fallback's PulseAudio driver
)
missing=()
for cmd in "${!wanted[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${wanted[$cmd]}")
done
for file in "${!wanted_files[@]}"; do
  [ -e "$file" ] || missing+=("${wanted_files[$file]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    echo "setup: please install these Debian packages: ${missing[*]}" >&2
    exit 1
  fi
fi

pnpm install --frozen-lockfile
# The reference server's PocketSphinx binding (packages/server/README.md); skipped with a notice when
# PocketSphinx is not installed (the server then uses its deterministic recognizer).
node packages/server/scripts/build-pocketsphinx.mjs --if-available
