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
)
missing=()
for cmd in "${!wanted[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${wanted[$cmd]}")
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
