#!/usr/bin/env bash
# Using the service from curl: start a session, open a page, act with an explicit instruction (no
# model), read the page text, end the session. Needs curl and jq, a running service
# (`npm start`), and:
#   PLATFORM_API_URL  the service, e.g. http://127.0.0.1:3000
#   PLATFORM_API_KEY  a key it printed at its first start
#   PAGE_URL          a page the service may open, e.g. a page of your site
#
# Run: bash examples/service-curl.sh
set -euo pipefail
: "${PLATFORM_API_URL:?set PLATFORM_API_URL}" "${PLATFORM_API_KEY:?set PLATFORM_API_KEY}" "${PAGE_URL:?set PAGE_URL}"

call() { # call METHOD PATH [JSON BODY]
  curl -sS --fail-with-body -X "$1" "$PLATFORM_API_URL/v1$2" \
    -H "x-platform-api-key: $PLATFORM_API_KEY" -H "content-type: application/json" \
    ${3:+--data "$3"}
}

session=$(call POST /sessions/start '{}' | jq -r .data.sessionId)
echo "session $session"
trap 'call POST "/sessions/$session/end" "{}" >/dev/null' EXIT

call POST "/sessions/$session/navigate" "$(jq -n --arg url "$PAGE_URL" '{url: $url}')" | jq -r '.data.url // .data.result.url // "opened"'
call POST "/sessions/$session/act" '{"input": "type '\''Ada Lovelace'\'' into the Full name field"}' | jq -r .data.result.message
call POST "/sessions/$session/act" '{"input": "check Gift wrap"}' | jq -r .data.result.message
call POST "/sessions/$session/extract" '{}' | jq -r .data.result.pageText | grep -E 'Full name|Gift wrap'
