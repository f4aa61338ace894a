# Mishap: `make run` serves the default scenarios, `make test` runs every test; `make check` (what
# CI runs, before `make sanitize`) adds a smoke pass of the benchmarks and the image check.
# All install what is missing first (libmicrohttpd-dev, libyaml-dev and libcurl4-gnutls-dev through apt-get).

SWIFT ?= swift
SCENARIOS ?= scenarios
ARGS ?=
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_PACKAGES := libmicrohttpd-dev libgnutls28-dev libyaml-dev libcurl4-gnutls-dev pkg-config curl python3

.PHONY: all deps build release run install uninstall test check clean

all: build

## deps: install libmicrohttpd-dev, libgnutls28-dev (certificates for HTTPS), libyaml-dev and libcurl4-gnutls-dev (--upstream) (and pkg-config, curl, and python3 for the
## Python test suite) when pkg-config cannot find them
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libmicrohttpd || ! pkg-config --exists yaml-0.1 || ! pkg-config --exists gnutls || ! pkg-config --exists libcurl || ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then \
		echo "mishap: installing $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

## release: the Swift runtime linked in, and a fixed-address (non-PIE) executable, which spares the
## dynamic loader ~76,000 relocations at every start (about 1 ms). The flags are written once, in
## scripts/release-flags: the Dockerfile reads that file, and the scripts that build a release
## (bench, soak, image-check) get them from here, or read the file when run by hand. Only the
## mishap product: the tests' support target needs the Testing module, which a release build lacks.
RELEASE_FLAGS := $(shell cat scripts/release-flags)
ifeq ($(strip $(RELEASE_FLAGS)),)
$(error scripts/release-flags is missing or empty)
endif

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product mishap

## run: build a release binary and serve ./scenarios on http://127.0.0.1:8080 (ARGS="--port 9000" to change)
run: release
	@echo "mishap: serving $(SCENARIOS) at the URL on the line 'mishap listening on ...' below; press Ctrl-C to stop it"
	.build/release/mishap serve --scenarios $(SCENARIOS) $(ARGS)

## install: the release binary to PREFIX/bin and the default scenarios to PREFIX/share/mishap,
## where `mishap serve` finds them when the current folder has no ./scenarios. PREFIX is
## /usr/local for root or when /usr/local/bin is writable, else ~/.local (no sudo needed);
## `make install PREFIX=/opt/mishap` chooses. DESTDIR stages a package.
PREFIX ?= $(if $(or $(filter 0,$(shell id -u)),$(shell test -w /usr/local/bin && echo yes)),/usr/local,$(HOME)/.local)
install: release
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/mishap"
	install -m 0755 .build/release/mishap "$(DESTDIR)$(PREFIX)/bin/mishap"
	rm -rf "$(DESTDIR)$(PREFIX)/share/mishap/scenarios"
	cp -R scenarios "$(DESTDIR)$(PREFIX)/share/mishap/scenarios"
	@echo "mishap: installed $(PREFIX)/bin/mishap and the default scenarios in $(PREFIX)/share/mishap/scenarios"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "mishap: $(PREFIX)/bin is not on your PATH; add it, for example: echo 'export PATH=\"$(PREFIX)/bin:\$$PATH\"' >> ~/.profile" ;; esac

## uninstall: remove what install put in PREFIX
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/mishap"
	rm -rf "$(DESTDIR)$(PREFIX)/share/mishap"

## test: build and run every test, and only the tests, in four runs of the Swift tests and one of
## the Python suite (Tests/python: Mishap driven from another language's test runner). The tests that start
## processes run on their own: Foundation's Process.run can crash in a test process holding
## thousands of sockets (the in-process server tests, all at once). The fuzzers run last and
## alone: they keep both cores busy for several seconds, which would starve the tests that
## measure delays. The HTTP fuzzer, which waits on a real server, runs apart from the scenario
## fuzzers, whose huge files and 100,000-rule sets would stall its server and its clients.
FUZZ_TESTS := MishapFuzzTests
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip MishapCLITests --skip $(FUZZ_TESTS)
	$(SWIFT) test --skip-build --filter MishapCLITests
	python3 -m unittest discover -s Tests/python -v
	$(SWIFT) test --skip-build --filter $(FUZZ_TESTS).HTTPFuzzTests
	$(SWIFT) test --skip-build --filter $(FUZZ_TESTS) --skip $(FUZZ_TESTS).HTTPFuzzTests

## check: every test, then a brief smoke pass of the benchmark harness and the image check (both
## build the release binary of make release, in .build/release; the benchmarks install wrk if it is missing)
check: deps
	$(MAKE) test
	$(MAKE) bench-smoke
	$(MAKE) image-check

## bench: measure Mishap against a minimal C libmicrohttpd server, side by side (~8 minutes;
## exits 1 when a target is missed widely). BENCH_ARGS passes options to benchmarks/bench.py.
.PHONY: bench bench-smoke bench-instructions
bench: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" benchmarks/run.sh $(BENCH_ARGS)

## bench-instructions: instruction counts under callgrind, per request (log off and on) and from
## exec to serving, against the C baseline: deterministic where req/s is noisy (~5 minutes;
## installs valgrind; exits 1 when a target is missed). INSTRUCTIONS_ARGS passes options.
bench-instructions: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" benchmarks/run.sh --instructions $(INSTRUCTIONS_ARGS)

## bench-smoke: the same, once and briefly, asserting nothing about speed (keeps the harness
## working; make check runs it)
bench-smoke: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" benchmarks/run.sh --smoke $(BENCH_ARGS)

## sanitize: every test under AddressSanitizer (with LeakSanitizer), then all but the scenario
## loader fuzzing under ThreadSanitizer; fails on any report, from a test or from a mishap
## process a test started. Not part of make test or make check (CI runs its groups after them,
## as its time allows; see .ci/run): about 13 + 9 minutes on two cores, building in .build-asan
## and .build-tsan. make asan or make tsan
## runs one; SANITIZE_GROUPS="main cli" picks groups (see scripts/sanitize.sh).
.PHONY: sanitize asan tsan
sanitize: deps
	$(MAKE) asan
	$(MAKE) tsan

asan: deps
	SWIFT="$(SWIFT)" scripts/sanitize.sh address $(SANITIZE_GROUPS)

tsan: deps
	SWIFT="$(SWIFT)" scripts/sanitize.sh thread $(SANITIZE_GROUPS)

## test-under-load: the tests of make test but the fuzzers, ROUNDS times (default 20) while BUSY
## loops (default 2) keep the processors busy; fails on the first failing round (not in CI: ~15 min)
.PHONY: test-under-load
test-under-load: deps
	$(SWIFT) build --build-tests
	SWIFT="$(SWIFT)" scripts/test-under-load.sh

## soak: every fault, delay, cycle, session, reload and admin call at once under wrk against a
## release build for SOAK_SECONDS (default 180), then checks that RSS stayed flat, descriptors
## came back, the server lives and nothing failed unasked (not part of make test or make check; exits 1 on a
## failed check). SOAK_ARGS passes options to scripts/soak/soak.py.
.PHONY: soak
soak: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" scripts/soak.sh $(SOAK_ARGS)

## slowloris: more connections than --connection-limit 200 trickling a header line every 5 s
## against a release build, and the latency of normal requests meanwhile; exits 1 when one is
## not answered within the head timeout plus 5 s (not part of make test or make check).
## SLOWLORIS_ARGS passes options to scripts/slowloris.py (--head-timeout 0 shows the server without the deadline).
.PHONY: slowloris
slowloris: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" scripts/slowloris.sh $(SLOWLORIS_ARGS)

## image-check: the Dockerfile's runtime stage, proven without Docker (ldd, and serving from
## a folder outside the source tree); make check runs it
.PHONY: image-check install-check browser-check dashboard-check
## browser-check: CORS through headless Chromium (installed with apt-get when missing): a page on
## one origin calls Mishap on another (CI runs it)
browser-check: deps
	SWIFT="$(SWIFT)" scripts/browser-check.sh

## dashboard-check: the dashboard (/__mishap/ui/) in headless Chromium driven by Selenium, both
## installed when missing (CI runs it; ~1 minute). DASHBOARD_SCREENSHOTS=1 rewrites docs/dashboard-*.png
dashboard-check: deps
	SWIFT="$(SWIFT)" scripts/dashboard-check.sh

## install-check: make install into a temporary PREFIX, serve the installed default scenarios
## from another folder, then make uninstall (CI runs it)
install-check: deps
	SWIFT="$(SWIFT)" scripts/install-check.sh

image-check: deps
	SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" scripts/image-check.sh

clean:
	rm -rf .build .build-bench .build-soak .build-asan .build-tsan
