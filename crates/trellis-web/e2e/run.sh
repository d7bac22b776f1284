#!/usr/bin/env bash
# The end-to-end browser test of `trellis interactive serve`, from a fresh checkout:
# builds the `trellis` binary (release), installs Debian's chromium when missing
# (as root; otherwise fails with a message), installs playwright-core with `npm ci`,
# and runs e2e/test.mjs on the bundled Iris data. The screenshot goes to
# docs/figures/interactive-web.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"

points="${POINTS:-$root/../shared/data/ibhc/iris.csv}"
if [ ! -f "$points" ]; then
  echo "e2e: the Iris data $points is missing (shared/ beside the repository; or set POINTS)" >&2
  exit 1
fi

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "e2e: installing Debian's chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null
  else
    echo "e2e: /usr/bin/chromium is missing; install it with 'sudo apt-get install -y chromium'" >&2
    exit 1
  fi
fi
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "e2e: node and npm are needed (Debian: apt-get install -y nodejs npm)" >&2
  exit 1
fi

echo "e2e: building the trellis binary"
cargo build --release --locked -p trellis-cli

echo "e2e: npm ci"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

echo "e2e: running the browser test"
TRELLIS_BIN="$root/target/release/trellis" POINTS="$points" \
  SCREENSHOT="$root/docs/figures/interactive-web.png" \
  node "$here/test.mjs"
