#!/usr/bin/env bash
# The deckhand command: one browser kept open across commands (--keep-open), explicit
# instructions (no model), the page as text, a screenshot, then `deckhand close`.
#
# Run: bash examples/cli.sh   (from the repository root; installed, it is just `deckhand`)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
deckhand() { node "$here/../scripts/setup.mjs" --quiet --run "$here/../packages/deckhand/src/cli/bin.ts" "$@"; }
export DECKHAND_CLI_STATE="${DECKHAND_CLI_STATE:-$(mktemp -d)/cli-session.json}"
trap 'deckhand close >/dev/null' EXIT

deckhand act "$here/pages/shop.html" "type 'Ada Lovelace' into the Full name field" --keep-open --json | jq -r .result.message
deckhand act "select Germany from the Country dropdown" --json | jq -r .result.message
deckhand act "click Place order" --json | jq -r .result.message
deckhand text --json | jq -r .result.pageText | grep -E 'Full name|Order placed|status'
deckhand screenshot -o "${TMPDIR:-/tmp}/deckhand-example.png" --json | jq -r '"screenshot: \(.result.bytes) bytes"'
