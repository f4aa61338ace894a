# Mishap: `make run` serves the default scenarios, `make test` runs every test; `make check` is
# what CI requires (the lint, every test, the install, image, benchmark and dashboard checks and
# the instruction-count gate, listed once in scripts/check.sh), and CI (.ci/run) runs it, then the
# sanitizers. All install what is missing first (libmicrohttpd-dev, libyaml-dev and
# libcurl4-gnutls-dev through apt-get).

SWIFT ?= swift
SCENARIOS ?= scenarios
ARGS ?=
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_PACKAGES := libmicrohttpd-dev libgnutls28-dev libyaml-dev libcurl4-gnutls-dev pkg-config curl python3 nginx

.PHONY: all deps build release run install uninstall test lint check clean

all: build

## deps: install libmicrohttpd-dev, libgnutls28-dev (certificates for HTTPS), libyaml-dev and libcurl4-gnutls-dev (--upstream) (and pkg-config, curl, python3 for the
## Python test suite, and nginx for the test of several instances behind it, docs/scaling-out.md) when pkg-config cannot find them
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libmicrohttpd || ! pkg-config --exists yaml-0.1 || ! pkg-config --exists gnutls || ! pkg-config --exists libcurl || ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1 || ! { command -v nginx || test -x /usr/sbin/nginx; } >/dev/null 2>&1; then \
		echo "mishap: installing $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

## release: .build/release/mishap (its path is printed), built by scripts/build-release.sh, which
## every harness that needs a release binary calls (bench, bench-instructions, soak, slowloris,
## image-check, and install through this target). Its flags are written once, in
## scripts/release-flags, which the Dockerfile reads too: the Swift runtime linked in, and a
## fixed-address (non-PIE) executable, which spares the dynamic loader ~76,000 relocations at
## every start (about 1 ms). Only the mishap product: the tests' support target needs the Testing
## module, which a release build lacks.
release: deps
	@SWIFT="$(SWIFT)" scripts/build-release.sh

## run: build a release binary and serve ./scenarios on http://127.0.0.1:8080 (ARGS="--port 9000" to change)
run: release
	@echo "mishap: serving $(SCENARIOS) at the URL on the line 'mishap listening on ...' below; press Ctrl-C to stop it"
	.build/release/mishap serve --scenarios $(SCENARIOS) $(ARGS)

## install: the release binaries (mishap, and mishap-import, which `mishap import` runs from
## beside it) to PREFIX/bin and the default scenarios to PREFIX/share/mishap,
## where `mishap serve` finds them when the current folder has no ./scenarios. PREFIX is
## /usr/local for root or when /usr/local/bin is writable, else ~/.local (no sudo needed);
## `make install PREFIX=/opt/mishap` chooses. DESTDIR stages a package.
PREFIX ?= $(if $(or $(filter 0,$(shell id -u)),$(shell test -w /usr/local/bin && echo yes)),/usr/local,$(HOME)/.local)
install: release
	@SWIFT="$(SWIFT)" PRODUCT=mishap-import scripts/build-release.sh >/dev/null
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/mishap"
	install -m 0755 .build/release/mishap "$(DESTDIR)$(PREFIX)/bin/mishap"
	install -m 0755 .build/release/mishap-import "$(DESTDIR)$(PREFIX)/bin/mishap-import"
	rm -rf "$(DESTDIR)$(PREFIX)/share/mishap/scenarios"
	cp -R scenarios "$(DESTDIR)$(PREFIX)/share/mishap/scenarios"
	@echo "mishap: installed $(PREFIX)/bin/mishap, $(PREFIX)/bin/mishap-import (mishap import) and the default scenarios in $(PREFIX)/share/mishap/scenarios"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "mishap: $(PREFIX)/bin is not on your PATH; add it, for example: echo 'export PATH=\"$(PREFIX)/bin:\$$PATH\"' >> ~/.profile" ;; esac

## uninstall: remove what install put in PREFIX
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/mishap" "$(DESTDIR)$(PREFIX)/bin/mishap-import"
	rm -rf "$(DESTDIR)$(PREFIX)/share/mishap"

## test: build and run every test, and only the tests, in five runs of the Swift tests and one of
## the Python suite (Tests/python: Mishap driven from another language's test runner). The tests that start
## processes run on their own: Foundation's Process.run can crash in a test process holding
## thousands of sockets (the in-process server tests, all at once). The fuzzers run last and
## alone: they keep both cores busy for several seconds, which would starve the tests that
## measure delays. The HTTP fuzzer, which waits on a real server, runs apart from the scenario
## fuzzers, whose huge files and 100,000-rule sets would stall its server and its clients.
## A green run is quiet: the build fails on a compiler warning, and scripts/quiet-tests.py prints
## no line per started or passed test and each known issue as one line; failures are printed
## whole, and each step's whole output is kept in .build/test-logs/.
FUZZ_TESTS := MishapFuzzTests
## The suites that start processes (Foundation's Process.run), run apart from the in-process
## tests: the command line's, and two outside it (curl against the local authority's
## certificates; a client process given only a session's base URL). Foundation's Process.run
## crashes (a bad pointer in its memcpy) in a process holding thousands of descriptors, as
## the in-process tests do: the tests there that run curl start it with posix_spawnp
## (Tests/MishapTestSupport/SpawnedCommand.swift), never with Process.
PROCESS_TESTS := MishapCLITests|MishapTLSTests.NameConstraintsTests|MishapTestingTests.RuntimeSetupTests
## Command-line tests that keep both cores busy for many seconds (the README's Package.swift
## evaluated by swift package), run with the scenario fuzzers, away from the tests that time a
## process's exit.
HEAVY_CLI_TESTS := DocumentationBlockTests/manifestsEvaluate
## The command-line test that times 1,000 requests held on a slow upstream runs alone.
HELD_CLI_TESTS := UpstreamHeldRequestsTests
QUIET = scripts/quiet-tests.py --log .build/test-logs/$(1).log
test: deps python-test-deps
	@mkdir -p .build/test-logs
	$(call QUIET,build) --no-warnings -- $(SWIFT) build --build-tests -q
	$(call QUIET,in-process) -- $(SWIFT) test --skip-build --skip "$(PROCESS_TESTS)" --skip $(FUZZ_TESTS)
	$(call QUIET,command-line) -- $(SWIFT) test --skip-build --filter "$(PROCESS_TESTS)" --skip "$(HEAVY_CLI_TESTS)|$(HELD_CLI_TESTS)"
	$(call QUIET,held-requests) -- $(SWIFT) test --skip-build --filter "$(HELD_CLI_TESTS)"
	python3 -m unittest discover -s Tests/python
	$(call QUIET,http-fuzz) -- $(SWIFT) test --skip-build --filter $(FUZZ_TESTS).HTTPFuzzTests
	$(call QUIET,scenario-fuzz) -- $(SWIFT) test --skip-build --filter "$(FUZZ_TESTS)|$(HEAVY_CLI_TESTS)" --skip $(FUZZ_TESTS).HTTPFuzzTests

## lint: swift format's rules (.swift-format) over every Swift file, and no trailing whitespace or
## tabs; fails on any finding (scripts/lint.sh; seconds; make check runs it)
lint:
	SWIFT="$(SWIFT)" scripts/lint.sh

## check: what CI requires, stage by stage (scripts/check.sh, their one list): lint, test,
## install-check, image-check, bench-smoke, the instruction-count gate (bench-instructions'
## smoke pass), dashboard-check, api-check. Stops at the first failure; ends with a table of every stage's
## time and result, each stage's output in .build/ci/ (about 7 minutes on 2 cores).
## CHECK_ONLY="lint bench-smoke" runs only those stages (the others show as NOT RUN).
check: deps
	SWIFT="$(SWIFT)" scripts/check.sh $(CHECK_ONLY)

## bench: measure Mishap against a minimal C libmicrohttpd server, side by side (~8 minutes;
## exits 1 when a target is missed widely). BENCH_ARGS passes options to benchmarks/bench.py.
.PHONY: bench bench-smoke bench-instructions
bench: deps
	SWIFT="$(SWIFT)" benchmarks/run.sh $(BENCH_ARGS)

## bench-instructions: instruction counts under callgrind, per request (log off and on) and from
## exec to serving, against the C baseline: deterministic where req/s is noisy (~5 minutes;
## installs valgrind; exits 1 when a target is missed or the gate fails). INSTRUCTIONS_ARGS
## passes options: --smoke (make check; about 15 s after the release build) runs each case once
## and asserts only the gate: per request with the log on at most 1.20x the C server's, startup
## at most 10% over benchmarks/instructions-baseline.txt; --write-baseline moves that baseline
## (say why).
bench-instructions: deps
	SWIFT="$(SWIFT)" benchmarks/run.sh --instructions $(INSTRUCTIONS_ARGS)

## bench-smoke: make bench, once and briefly, asserting nothing about speed (keeps the harness
## working; make check runs it)
bench-smoke: deps
	SWIFT="$(SWIFT)" benchmarks/run.sh --smoke $(BENCH_ARGS)

## sanitize: every test under AddressSanitizer (with LeakSanitizer), then all but the scenario
## loader fuzzing under ThreadSanitizer; fails on any report, from a test or from a mishap
## process a test started. Not part of make test or make check (CI runs its groups after make
## check, each within its budget; see .ci/run): about 10 + 10 minutes on two cores, builds
## included, in .build-asan and .build-tsan. make asan or make tsan runs one;
## SANITIZE_GROUPS="main cli" picks groups (see scripts/sanitize.sh).
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
	SWIFT="$(SWIFT)" scripts/soak.sh $(SOAK_ARGS)

## slowloris: more connections than --connection-limit 200 trickling a header line every 5 s
## against a release build, and the latency of normal requests meanwhile; exits 1 when one is
## not answered within the head timeout plus 5 s (not part of make test or make check).
## SLOWLORIS_ARGS passes options to scripts/slowloris.py (--head-timeout 0 shows the server without the deadline).
.PHONY: slowloris
slowloris: deps
	SWIFT="$(SWIFT)" scripts/slowloris.sh $(SLOWLORIS_ARGS)

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
	SWIFT="$(SWIFT)" scripts/image-check.sh

clean:
	rm -rf .build .build-bench .build-soak .build-asan .build-tsan

## python-test-deps: jsonschema, PyYAML, urllib3 and websockets for python3, installed with pip when they do not import
## (the scenario schema tests of make test: docs/scenario.schema.json against the files and the loader)
.PHONY: python-test-deps
python-test-deps:
	@scripts/python-test-deps.sh

## api-check: the admin API fuzzed against its OpenAPI description (GET /__mishap/openapi.json)
## with schemathesis, installed from PyPI into .build/api-check-venv when missing: a debug
## mishap serve of the default scenarios on a free port (with HTTPS, a small runtime-rule limit
## and requests of every kind meanwhile), no 5xx but the documented 507, every answer as
## described; then the server is stopped (~30-60 s). API_CHECK_EXAMPLES, API_CHECK_SEED and
## API_CHECK_ARGS: see scripts/api-check.sh
.PHONY: api-check
api-check: deps
	SWIFT="$(SWIFT)" scripts/api-check.sh
