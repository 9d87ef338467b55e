#!/usr/bin/env bash
# Shows that the concurrent-migration test catches the race it guards against: it builds a copy of
# the package whose migration runs without the BEGIN IMMEDIATE transaction (layout read first,
# altered later, as a naive migration does) and runs the same test against that copy. Expect it
# to FAIL (duplicate columns or a locked database); then the real build passes the same test.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build --silent
# Inside the repo, so the copy resolves node_modules like dist/ does.
unguarded=$(mktemp -d "$PWD/.unguarded-dist.XXXXXX")
trap 'rm -rf "$unguarded"' EXIT
cp -r dist/. "$unguarded/"
migrate="$unguarded/store/sqlite/migrate.js"
grep -q 'db.transaction(() => {' "$migrate"
sed -i 's/db.transaction(() => {/(() => {/; s/}).immediate();/})();/' "$migrate"
echo "== against an unguarded migration (expected to fail):"
if AGENT_LAB_DIST="$unguarded" npx vitest run src/store/sqlite/concurrent-migration.test.ts; then
  echo "UNEXPECTED: the unguarded migration passed; the test would not catch the race" >&2
  exit 1
fi
echo "== against the real build (expected to pass):"
npx vitest run src/store/sqlite/concurrent-migration.test.ts
echo "OK: the test fails without the guard and passes with it."
