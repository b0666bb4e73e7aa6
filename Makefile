# adloaderd — two commands on a fresh Debian machine: `make run` and `make test`.

SWIFT        ?= swift
APT_PACKAGES := libuv1-dev libprotobuf-c-dev protobuf-c-compiler libnghttp2-dev libcurl4-openssl-dev pkg-config \
                libhttp-parser-dev python3-venv chromium libsqlite3-dev libhiredis-dev redis-server nghttp2-client jq \
                nginx haproxy
# libhttp-parser-dev: the admin HTTP listener's parser. chromium: only for the dashboard test
# (Tests/python/test_dashboard.py, headless); about 2.5 minutes to install on a fresh machine.
# libsqlite3-dev, libhiredis-dev: the app-open cap stores; redis-server: started by the tests;
# nghttp2-client: h2load, the soak's gRPC calls. jq: the shell cases of Examples/. nginx: the
# gRPC proxy in front of three daemons (Examples/cluster, Tests/python/test_cluster.py), run by
# the tests as the current user (Debian's package does not start it in a container without an
# init system). haproxy: the multiplexing proxy beside nginx (the same tests, cluster-load.sh).
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ARGS         ?=

VENV         := .venv
PYTHON_REQS  := Tests/python/requirements.txt

.PHONY: all deps venv pytest examples examples-daemon soak soak-smoke build release run test bench bench-smoke fuzz fuzz-smoke fuzz-seeds proto check-proto clean

all: build

# Installs the Debian packages that are missing (apt-get only when something is).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -o DPkg::Lock::Timeout=600 install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product adloaderd
	$(SWIFT) build -c release --product adloader

# Starts the daemon on its embedded default (synthetic demand, loader "default"), with the
# admin listener (dashboard, /metrics) on 127.0.0.1:7412.
run: release
	.build/release/adloaderd --admin-port 7412 $(ARGS)

# Builds and runs every test (unit, model-based, conformance against the real daemon).
# The benchmarks' and fuzz targets' smoke runs go first so that the test runner's summary is
# the last line.
test: deps
	$(SWIFT) build --build-tests
	$(MAKE) bench-smoke
	$(MAKE) fuzz-smoke
	$(MAKE) soak-smoke
	$(MAKE) pytest
	$(SWIFT) test --skip-build

# The Python test tooling in a virtual environment (pinned in Tests/python/requirements.txt);
# recreated when the requirements change. Some Debian Pythons refuse a global pip install.
venv: $(VENV)/.installed
$(VENV)/.installed: $(PYTHON_REQS) | deps
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r $(PYTHON_REQS)
	touch $@

# The Python tests (Tests/python) against the real debug binary; PYTEST_ARGS narrows them.
pytest: venv
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product adloader
	$(VENV)/bin/python -m pytest -q Tests/python $(PYTEST_ARGS)

# The integration-case catalog (Examples/README.md) against a live daemon that serves
# Examples/adloaderd.json (`make examples-daemon` in another terminal): ADLOADER_ENDPOINT
# (default 127.0.0.1:7411) and ADLOADER_ADMIN (default http://127.0.0.1:7412) say where.
# `make test` runs the same cases against a daemon it starts (Tests/python/test_examples.py).
examples: venv
	$(SWIFT) build --product adloader
	Examples/run.sh

# The daemon the examples expect, in the foreground (Ctrl-C stops it): Examples/adloaderd.json on
# 127.0.0.1:7411, admin on 7412, and the tests' exchange stub on 127.0.0.1:8000 for the OpenRTB case.
examples-daemon: venv
	$(SWIFT) build --product adloaderd
	$(VENV)/bin/python -c 'import sys, time; sys.path.insert(0, "Tests/python"); import openrtb_stub; \
	  openrtb_stub.Exchange(port=8000); time.sleep(86400)' & stub=$$!; trap 'kill $$stub' EXIT INT TERM; \
	  .build/debug/adloaderd --config Examples/adloaderd.json --admin-port 7412 $(ARGS)

# Every benchmark at full size in release mode: results, plots and a summary in bench-results/.
# Long (minutes) and CPU-heavy; see BENCHMARKS.md.
bench: deps
	Benchmarks/run.sh

# A tiny run of each benchmark (debug build, seconds), so they cannot rot; part of `make test`.
bench-smoke: deps
	Benchmarks/run.sh --smoke

# libFuzzer targets (Fuzz/README.md): release + ASan + libFuzzer builds in .build-fuzz. The
# toolchain's own clang, lld and compiler-rt link them: no Debian package beyond APT_PACKAGES.
# `make fuzz` runs every target FUZZ_SECONDS (default 300) each, growing .build-fuzz/corpus;
# FUZZ_FLAGS adds libFuzzer flags, e.g. FUZZ_FLAGS=-jobs=2. Targets by name: Fuzz/run.sh envelope.
fuzz: deps
	Fuzz/run.sh

# A few seconds of each fuzz target from the committed seeds (part of `make test`).
fuzz-smoke: deps
	Fuzz/run.sh --smoke

# Rewrites the seed corpora (Fuzz/corpus/<target>/seed-*) from the targets' encoders.
fuzz-seeds: deps
	$(SWIFT) build
	for t in frame-decoder:FrameDecoderFuzz envelope:EnvelopeFuzz proto-scanner:ProtoScannerFuzz configuration:ConfigurationFuzz http2-session:HTTP2SessionFuzz bid-response:BidResponseFuzz; do \
	  mkdir -p Fuzz/corpus/$${t%%:*} && .build/debug/$${t##*:} --write-seeds Fuzz/corpus/$${t%%:*} || exit 1; \
	done

# The soak test (RELIABILITY.md): the release daemon under mixed load for SOAK_MINUTES with the
# settings of issue 15 (30 s ads, 5 s leases, 16 pipelined connections at 20k calls/s besides the
# mixed calls); fails when RSS keeps growing after warm-up, descriptors leak or an ad goes
# unaccounted. Samples and a summary in bench-results/soak-soak.{csv,json}; SOAK_ARGS adds flags.
SOAK_MINUTES ?= 10
SOAK_ARGS    ?=
soak: deps
	$(SWIFT) build -c release --product adloaderd
	$(SWIFT) build -c release --product ProtocolLoadBench
	$(SWIFT) build -c release --product SoakBench
	.build/release/SoakBench --minutes $(SOAK_MINUTES) --sample 10 --lifetime 30s --lease-timeout 5s --sweep 2s \
	  --pressure 16 --pressure-rate 20000 --max-growth-kib 4096 $(SOAK_ARGS)

# One minute of the soak on the debug build, 5 s ads (part of `make test`).
soak-smoke: deps
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product ProtocolLoadBench
	$(SWIFT) build --product SoakBench
	.build/debug/SoakBench --minutes 1 --sample 2 --pressure 4 --pressure-rate 5000 --out bench-results/soak-smoke

# Regenerates the committed protoc-c code from Proto/.
proto: deps
	dev/generate-proto.sh

clean:
	rm -rf .build .build-fuzz
