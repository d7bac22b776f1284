#!/usr/bin/env bash
# The end-to-end browser test of `trellis interactive serve`, from a fresh checkout:
# builds the `trellis` binary (release), installs Debian's chromium, nodejs and npm
# when missing (apt-get, as root; otherwise fails with a message), installs
# playwright-core from the committed lockfile with `npm ci` when it is missing,
# and runs e2e/test.mjs on the bundled Iris data and the digits example
# (examples/digits, beside it). The screenshots go to
# docs/figures/interactive-web.png, docs/figures/interactive-web-exact.png,
# docs/figures/interactive-large.png (the 150-leaf query) and
# docs/figures/interactive-digits.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"

points="${POINTS:-$root/examples/iris.csv}"
if [ ! -f "$points" ]; then
  echo "e2e: the Iris data $points is missing (examples/iris.csv; or set POINTS)" >&2
  exit 1
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v node > /dev/null || missing+=(nodejs)
command -v npm > /dev/null || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "e2e: installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
  else
    echo "e2e: ${missing[*]} missing; install with 'sudo apt-get install -y ${missing[*]}'" >&2
    exit 1
  fi
fi

echo "e2e: building the trellis binary"
cargo build --release --locked -p trellis-cli

# playwright-core as pinned by the committed package-lock.json; `npm ci` only when
# node_modules does not hold that version already.
wanted="$(node -p "require('$here/package-lock.json').packages['node_modules/playwright-core'].version")"
have="$(node -p "try { require('$here/node_modules/playwright-core/package.json').version } catch { '' }")"
if [ "$have" != "$wanted" ]; then
  echo "e2e: npm ci (playwright-core $wanted)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

echo "e2e: running the browser test"
TRELLIS_BIN="$root/target/release/trellis" POINTS="$points" \
  SCREENSHOT="$root/docs/figures/interactive-web.png" \
  node "$here/test.mjs"
