#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage without Docker: from the files alone, the build context
# (.dockerignore), the README's account of the packages and the HEALTHCHECK's command
# (scripts/image-static-check.py); then the release binary, built with the same flags, needs
# nothing beyond glibc (with libstdc++ and libgcc, which debian:bookworm-slim has),
# libmicrohttpd and libyaml; and, copied out of the source tree, it serves a scenarios folder
# that is elsewhere, and the image's HEALTHCHECK command, run with the image's ENV, passes for
# a server on a port other than 8080 and for one on HTTPS only, and fails once it is gone.
#
#   scripts/image-check.sh [BINARY]    (default: scripts/build-release.sh builds it into .build/release,
#                                      as `make release` does)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

fail() { echo "image-check: FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill ${pid:-} ${front:-} 2>/dev/null || true; rm -rf "$work"' EXIT

# 0. From the files: .dockerignore, the README's Docker section, the HEALTHCHECK and ENV (paths
#    of the image moved under $work/image).
python3 scripts/image-static-check.py --health-command "$work/health" --image-env "$work/image-env" --root "$work/image" \
    || fail "the checks above"
mapfile -t health <"$work/health"
mapfile -t image_env <"$work/image-env"
mkdir -p "$work/image/tmp"
# The HEALTHCHECK, run as the image runs it: the copied binary for `mishap`, the image's ENV.
healthcheck() { env "${image_env[@]}" "$work/mishap" "${health[@]:1}"; }
echo "image-check: HEALTHCHECK runs: ${health[*]} (with ${image_env[*]%%=*})"

binary=${1:-}
[ -n "$binary" ] || binary=$(SWIFT="$SWIFT" scripts/build-release.sh)

# 1. What the binary links: its own needs are the runtime's basics, libmicrohttpd and libyaml;
#    everything else ldd lists must come in through libmicrohttpd (which libmicrohttpd12 installs).
#    libcurl is not linked: it is loaded when --upstream is given (checked in 3).
allowed="libmicrohttpd.so.12 libgnutls.so.30 libyaml-0.so.2 libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libpthread.so.0 libdl.so.2 librt.so.1"
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for library in $needed; do
    case " $allowed " in *" $library "*) ;; *) fail "the binary needs $library, which the runtime image does not install" ;; esac
done
ldd "$binary" | grep -q "not found" && fail "ldd: $(ldd "$binary" | grep "not found")"
mhd=$(ldd "$binary" | awk '/libmicrohttpd/ {print $3}')
extra=$(comm -23 <(ldd "$binary" | awk '{print $1}' | sort -u) <( (ldd "$mhd" | awk '{print $1}'; echo "$needed"; echo linux-vdso.so.1) | sort -u))
[ -z "$extra" ] || fail "libraries from neither glibc nor libmicrohttpd: $extra"
echo "image-check: links only: $(echo $needed)"

# 2. Serves from a folder outside the source tree, run from elsewhere, as the image does, with
#    the image's ENV, on a port that is not the image's 8080 (as `docker run mishap serve
#    --port 9000` does): the HEALTHCHECK must find it there.
cp "$binary" "$work/mishap"
cp -r scenarios "$work/scenarios"
cd "$work"
env "${image_env[@]}" ./mishap serve --scenarios "$work/scenarios" --host 127.0.0.1 --port 0 --port-file "$work/port" >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "the server did not start: $(cat "$work/out")"
port=$(cat "$work/port")
body=$(curl -s "http://127.0.0.1:$port/isUserNameAvailable?userName=someone")
[ "$body" = '{"isAvailable":true,"userName":"someone"}' ] || fail "unexpected answer: $body"
healthcheck >"$work/health-out" || fail "the HEALTHCHECK failed for a server on port $port: $(cat "$work/health-out")"
kill -TERM "$pid"
wait "$pid" || fail "the server exited non-zero on SIGTERM"
healthcheck >"$work/health-out" && fail "the HEALTHCHECK passed with no server: $(cat "$work/health-out")"
echo "image-check: a copy outside the source tree served $work/scenarios on port $port, passed the HEALTHCHECK, stopped cleanly, then failed it"

# 3. HTTPS only (--port off), as the image serves it: the CA folder in the image's
#    MISHAP_TLS_DIR (a mounted volume there), made on first use, and the same folder trusted by
#    the client and by the HEALTHCHECK.
tls=$(printf '%s\n' "${image_env[@]}" | sed -n 's/^MISHAP_TLS_DIR=//p')
[ -n "$tls" ] || fail "the image sets no MISHAP_TLS_DIR"
env "${image_env[@]}" ./mishap serve --scenarios "$work/scenarios" --host 127.0.0.1 --port off \
    --tls-port 0 --no-tls-catalogue >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "listening on https" "$work/out" && break; sleep 0.05; done
https=$(sed -n 's/^mishap listening on \(https:[^ ]*\).*/\1/p' "$work/out")
[ -n "$https" ] || fail "the server did not serve HTTPS: $(cat "$work/out")"
body=$(curl -s --cacert "$tls/ca.pem" "$https/isUserNameAvailable?userName=someone")
[ "$body" = '{"isAvailable":true,"userName":"someone"}' ] || fail "unexpected answer over HTTPS: $body"
[ "$(stat -c %a "$tls/ca-key.pem")" = 600 ] || fail "the CA key is not mode 0600"
healthcheck >"$work/health-out" || fail "the HEALTHCHECK failed for a server on HTTPS only: $(cat "$work/health-out")"
kill -TERM "$pid"
wait "$pid" || fail "the server exited non-zero on SIGTERM"
echo "image-check: HTTPS only from a CA folder made in MISHAP_TLS_DIR, trusted with its ca.pem, and by the HEALTHCHECK"

# 4. --upstream, which loads libcurl (libcurl3-gnutls in the image) when it starts: a server in
#    front of a second one passes on what no rule of its own answers.
rm -f "$work/port"
./mishap serve --scenarios "$work/scenarios" --host 127.0.0.1 --port 0 --port-file "$work/port" >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
upstream=$(cat "$work/port")
mkdir "$work/front"
printf 'endpoint: GET /front\nrules:\n  - name: front\n    respond: { text: front }\n' >"$work/front/front.yaml"
rm -f "$work/port"
./mishap serve --scenarios "$work/front" --host 127.0.0.1 --port 0 --port-file "$work/port" \
    --upstream "http://127.0.0.1:$upstream" >"$work/out-front" 2>&1 &
front=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "the server with --upstream did not start: $(cat "$work/out-front")"
port=$(cat "$work/port")
body=$(curl -s "http://127.0.0.1:$port/isUserNameAvailable?userName=someone")
[ "$body" = '{"isAvailable":true,"userName":"someone"}' ] || fail "unexpected answer through --upstream: $body"
[ "$(curl -s "http://127.0.0.1:$port/front")" = front ] || fail "the front's own rule did not answer"
kill -TERM "$front" "$pid"
wait "$front" || fail "the server with --upstream exited non-zero on SIGTERM"
wait "$pid" || true
echo "image-check: --upstream loaded libcurl and passed a request on"
