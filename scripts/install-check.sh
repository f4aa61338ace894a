#!/usr/bin/env bash
# make install-check: `make install` into a temporary PREFIX, then, from a folder with no
# ./scenarios, the installed `mishap` serves the installed default scenarios (the maintenance
# cycle answers 500), `validate` and `routes` read them, `mishap import openapi` finds the
# installed importer beside it and writes a folder that validates, and `make uninstall` removes
# it all.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)
prefix=$(mktemp -d /tmp/mishap-install.XXXXXX)
elsewhere=$(mktemp -d /tmp/mishap-elsewhere.XXXXXX)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$prefix" "$elsewhere"; }
trap cleanup EXIT
fail() { echo "install-check: $*" >&2; exit 1; }

make --no-print-directory install PREFIX="$prefix" SWIFT="${SWIFT:-swift}"
[ -x "$prefix/bin/mishap" ] || fail "no executable $prefix/bin/mishap"
[ -f "$prefix/share/mishap/scenarios/login.yaml" ] || fail "no default scenarios in $prefix/share/mishap/scenarios"
[ -x "$prefix/bin/mishap-import" ] || fail "no executable $prefix/bin/mishap-import"

cd "$elsewhere"
"$prefix/bin/mishap" validate >/dev/null || fail "validate did not find the installed scenarios"
# Read the whole listing first: `routes | grep -q` under pipefail fails whenever grep stops
# reading before mishap has written everything (mishap then exits on the closed pipe).
routes=$("$prefix/bin/mishap" routes) || fail "routes failed"
grep -q "GET /isUserNameAvailable" <<<"$routes" || fail "routes did not list the installed scenarios"
"$prefix/bin/mishap" import openapi "$repository/Tests/MishapImportTests/Fixtures/petstore-3.0.yaml" --out imported >/dev/null \
    || fail "mishap import openapi did not run the installed importer"
"$prefix/bin/mishap" validate imported >/dev/null || fail "the imported folder does not validate"
"$prefix/bin/mishap" serve --port 0 >"$elsewhere/out" 2>"$elsewhere/err" &
server=$!
url=""
for _ in $(seq 1 100); do
    url=$(sed -n 's/^mishap listening on //p' "$elsewhere/out")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || fail "the installed mishap did not start: $(cat "$elsewhere/err")"
status=$(curl -s -o /dev/null -w '%{http_code}' "$url/isUserNameAvailable?userName=maintenance")
[ "$status" = 500 ] || fail "maintenance answered $status, not 500"
grep -q "share/mishap/scenarios" "$elsewhere/err" || fail "the log does not say which scenarios it serves: $(cat "$elsewhere/err")"
kill "$server"; wait "$server" || true; server=""
cd - >/dev/null

make --no-print-directory uninstall PREFIX="$prefix"
[ ! -e "$prefix/bin/mishap" ] && [ ! -e "$prefix/bin/mishap-import" ] && [ ! -e "$prefix/share/mishap" ] || fail "uninstall left files behind"
echo "install-check: ok ($url served the installed default scenarios)"
