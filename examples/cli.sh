#!/usr/bin/env bash
# The deckhand command: one browser kept open across commands (--keep-open), explicit
# instructions (no model), the page as text, a screenshot, then `deckhand close`.
#
# Run: bash examples/cli.sh   (from the repository root; installed, it is just `deckhand`)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# From the repository: make sure it is set up (npm packages, a browser) once, then run the command
# from the sources with the pinned Node.
node "$here/../scripts/setup.mjs" --quiet
deckhand() { "$here/../node_modules/.bin/node" --conditions=deckhand-source --no-warnings "$here/../packages/deckhand/src/cli/bin.ts" "$@"; }
export DECKHAND_CLI_STATE="${DECKHAND_CLI_STATE:-$(mktemp -d)/cli-session.json}"
trap 'deckhand close >/dev/null' EXIT

# The browser stays open for the next commands; one that no command uses for two minutes goes by
# itself (--idle-timeout, default 5m), should this script never reach its `deckhand close`.
deckhand act "$here/pages/shop.html" "type 'Ada Lovelace' into the Full name field" --keep-open --idle-timeout 2m --json | jq -r '.result.message // "\(.error.name): \(.error.message)"'
deckhand act "select Germany from the Country dropdown" --json | jq -r '.result.message // "\(.error.name): \(.error.message)"'
deckhand act "click Place order" --json | jq -r '.result.message // "\(.error.name): \(.error.message)"'
deckhand text --json | jq -r .result.pageText | grep -E 'Full name|Order placed|status'
deckhand screenshot -o "${TMPDIR:-/tmp}/deckhand-example.png" --json | jq -r '"screenshot: \(.result.bytes) bytes"'
