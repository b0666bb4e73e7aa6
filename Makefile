# adloaderd — two commands on a fresh Debian machine: `make run` and `make test`.

SWIFT        ?= swift
APT_PACKAGES := libuv1-dev libprotobuf-c-dev protobuf-c-compiler libnghttp2-dev libcurl4-openssl-dev pkg-config \
                libhttp-parser-dev python3-venv chromium libsqlite3-dev libhiredis-dev redis-server nghttp2-client jq \
                nginx golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev \
                protoc-gen-go protoc-gen-go-grpc protobuf-compiler \
                default-jdk-headless libgrpc-java libprotobuf-java protobuf-compiler-grpc-java-plugin libnetty-java \
                libperfmark-java libgoogle-gson-java libgeronimo-annotation-1.3-spec-java debootstrap patchelf \
                haproxy libssl-dev openssl nghttp2-server
# golang-*, protoc-gen-go*, protobuf-compiler: the Go example (clients/go), built offline in GOPATH
# mode against Debian's /usr/share/gocode (no module downloads) and run by the Python tests. The
# 1-5 golang/protobuf (APIv2 underneath) replaces the 1-3 that golang-google-grpc-dev would pull
# in: with 1-3, grpc-go cannot marshal protoc-gen-go 1.28's messages ("protobuf tag not enough fields").
# default-jdk-headless, lib*-java, protobuf-compiler-grpc-java-plugin: the JVM example (clients/java)
# with Debian's grpc-java 1.41 on Netty; libgrpc-java does not pull in Netty, perfmark, gson or
# javax.annotation (the generated stubs' @Generated), so they are listed.
# Installed without their recommends (prometheus recommends node-exporter and its collectors):
# promtool checks and unit-tests deploy/prometheus in `make test`. The package's init script is
# not started by the install where no init runs (a container: policy-rc.d refuses, or no runlevel).
APT_PACKAGES_NO_RECOMMENDS := prometheus
# libhttp-parser-dev: the admin HTTP listener's parser. chromium: only for the dashboard test
# (Tests/python/test_dashboard.py, headless); about 2.5 minutes to install on a fresh machine.
# libsqlite3-dev, libhiredis-dev: the app-open cap stores; redis-server: started by the tests;
# nghttp2-client: h2load, the soak's gRPC calls. jq: the shell cases of Examples/. nginx: the
# gRPC proxy in front of three daemons (Examples/cluster, Tests/python/test_cluster.py), run by
# the tests as the current user (Debian's package does not start it in a container without an
# init system). debootstrap, patchelf: `make deb` and its test (Tests/python/test_package.py,
# a fresh Debian root made once and cached in .build/deb-root).
# haproxy: the multiplexing proxy beside nginx (the same tests, cluster-load.sh).
# libssl-dev: TLS on the listener (COpenSSL); openssl: the test certificates of test_tls.py and
# AdLoaderTLSTests; nghttp2-server: nghttpd, the peer of grpc-load.sh and tls-load.py.
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ARGS         ?=

VENV         := .venv
PYTHON_REQS  := Tests/python/requirements.txt

.PHONY: all check-imports format format-check deb deps venv go-example java-example pytest crash-test cluster-rolling examples examples-daemon soak soak-smoke build release run test bench bench-smoke fuzz fuzz-smoke fuzz-status fuzz-seeds proto check-proto clean

all: build

# Installs the Debian packages that are missing (apt-get only when something is).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	bare=""; for p in $(APT_PACKAGES_NO_RECOMMENDS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || bare="$$bare $$p"; \
	done; \
	if [ -n "$$missing$$bare" ]; then \
	  echo "installing:$$missing$$bare"; \
	  $(SUDO) apt-get -o DPkg::Lock::Timeout=600 update -qq || exit 1; \
	fi; \
	if [ -n "$$missing" ]; then \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -o DPkg::Lock::Timeout=600 install -y -qq $$missing || exit 1; \
	fi; \
	if [ -n "$$bare" ]; then \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$bare || exit 1; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product adloaderd
	$(SWIFT) build -c release --product adloader

# The Debian package (.build/deb/adloaderd_VERSION_ARCH.deb) from the release binaries: both
# binaries with the Swift runtime they load, a sandboxed systemd unit running as the adloaderd
# user, /etc/adloaderd/adloaderd.json, /var/lib/adloaderd (dev/build-deb.sh says what and how).
deb: release
	dev/build-deb.sh release

# Starts the daemon on its embedded default (synthetic demand, loader "default"), with the
# admin listener (dashboard, /metrics) on 127.0.0.1:7412.
run: release
	.build/release/adloaderd --admin-port 7412 $(ARGS)

# Builds and runs every test (unit, model-based, conformance against the real daemon).
# The benchmarks' and fuzz targets' smoke runs go first so that the test runner's summary is
# the last line.
test: deps
	$(MAKE) check-imports
	$(MAKE) format-check
	$(SWIFT) build --build-tests
	$(MAKE) bench-smoke
	$(MAKE) fuzz-smoke
	$(MAKE) soak-smoke
	$(MAKE) pytest
	$(SWIFT) test --skip-build

# Which module may import which (dev/check-imports.py names the file, the line and the rule).
check-imports:
	python3 dev/check-imports.py

# The toolchain's formatter (`swift format`) with the committed .swift-format: `make format`
# rewrites the files in place, `make format-check` (part of `make test`) fails on any difference.
# .swift-format is the toolchain's defaults but 4 spaces and 120 columns (the code's style), with
# four lint rules off that formatting cannot satisfy and the code breaks on purpose:
# OnlyOneTrailingClosureArgument (`ConfigType(parse: {...}) { format }`), ReplaceForEachWithForLoop
# (a few `forEach` chains), AmbiguousTrailingClosureOverload (CArena's `with(_:)` overloads) and
# AlwaysUseLowerCamelCase (names that mirror C's, e.g. RLIMIT_NOFILE_VALUE).
FORMAT_PATHS := Package.swift Sources Tests Benchmarks Examples/Swift Fuzz
format:
	$(SWIFT) format format --in-place --parallel --recursive $(FORMAT_PATHS)

format-check:
	$(SWIFT) format lint --strict --parallel --recursive $(FORMAT_PATHS)

# The Python test tooling in a virtual environment (pinned in Tests/python/requirements.txt);
# recreated when the requirements change. Some Debian Pythons refuse a global pip install.
venv: $(VENV)/.installed
$(VENV)/.installed: $(PYTHON_REQS) | deps
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r $(PYTHON_REQS)
	touch $@

# The Python client package (clients/python), installed into the venv as a user would install it
# (not editable); reinstalled when its files change. Its build backend (setuptools) is already in
# the venv, so no build isolation (no download).
CLIENT_PY    := $(shell find clients/python -name '*.py' -o -name '*.pyi' -o -name '*.toml' -o -name '*.md' -o -name '*.typed' | grep -v -e /build/ -e egg-info)
$(VENV)/.client-installed: $(VENV)/.installed $(CLIENT_PY)
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./clients/python
	rm -rf clients/python/build clients/python/src/*.egg-info
	touch $@

# The Go example (clients/go/borrow-return) with Debian's Go and gRPC packages, offline: stubs
# generated by protoc into .build/go/src, built in GOPATH mode against /usr/share/gocode, the
# build cache in .build/go/cache (a rebuild only when the example or Proto/ changes).
GO_DIR       := .build/go
GO_EXAMPLE   := $(GO_DIR)/bin/borrow-return
go-example: $(GO_EXAMPLE)
$(GO_EXAMPLE): clients/go/borrow-return/main.go $(wildcard Proto/adloader/v1/*.proto) | deps
	rm -rf $(GO_DIR)/src && mkdir -p $(GO_DIR)/src
	protoc -I Proto --go_out=$(GO_DIR)/src --go-grpc_out=$(GO_DIR)/src \
	  Proto/adloader/v1/adloader.proto Proto/adloader/v1/frame.proto Proto/adloader/v1/service.proto
	GO111MODULE=off GOPROXY=off GOPATH=$(abspath $(GO_DIR)):/usr/share/gocode GOCACHE=$(abspath $(GO_DIR))/cache \
	  go build -o $@ ./clients/go/borrow-return

# The JVM example (clients/java/BorrowReturn.java) with Debian's grpc-java and protobuf-java:
# stubs generated by protoc and grpc_java_plugin into .build/java/src, compiled with javac against
# the jars in /usr/share/java (JAVA_CLASSPATH; no Maven/Gradle download).
JAVA_DIR     := .build/java
JAVA_JARS    := grpc-api grpc-core grpc-context grpc-stub grpc-protobuf grpc-protobuf-lite grpc-netty protobuf \
                protobuf-util guava perfmark-api gson jsr305 error_prone_annotations netty-buffer netty-codec \
                netty-codec-http netty-codec-http2 netty-common netty-handler netty-resolver netty-transport \
                opencensus-api geronimo-annotation-1.3-spec
JAVA_CLASSPATH := $(subst $(eval) ,:,$(foreach j,$(JAVA_JARS),/usr/share/java/$(j).jar))
JAVA_EXAMPLE := $(JAVA_DIR)/classes/BorrowReturn.class
java-example: $(JAVA_EXAMPLE)
	@echo "$(abspath $(JAVA_DIR))/classes:$(JAVA_CLASSPATH)" > $(JAVA_DIR)/classpath
$(JAVA_EXAMPLE): clients/java/BorrowReturn.java $(wildcard Proto/adloader/v1/*.proto) | deps
	rm -rf $(JAVA_DIR) && mkdir -p $(JAVA_DIR)/src $(JAVA_DIR)/classes
	protoc -I Proto --java_out=$(JAVA_DIR)/src --plugin=protoc-gen-grpc-java=/usr/bin/grpc_java_plugin \
	  --grpc-java_out=$(JAVA_DIR)/src Proto/adloader/v1/adloader.proto Proto/adloader/v1/service.proto
	javac -nowarn -d $(JAVA_DIR)/classes -cp "$(JAVA_CLASSPATH)" $$(find $(JAVA_DIR)/src -name '*.java') \
	  clients/java/BorrowReturn.java

# The Python tests (Tests/python) against the real debug binary; PYTEST_ARGS narrows them.
pytest: venv $(VENV)/.client-installed go-example java-example
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product adloader
	$(VENV)/bin/python -m pytest -q Tests/python $(PYTEST_ARGS)

# kill -9 at 100 random points under load against the exchange stub (RELIABILITY.md, issue 23);
# `make test` runs the same test at 3 points. CRASH_SEED picks the points.
crash-test: venv
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product adloader
	CRASH_POINTS=100 $(VENV)/bin/python -m pytest -q Tests/python/test_pool_crash.py

# The rolling restart of Examples/cluster (three replicas behind HAProxy, each with its pool
# store) with one-minute windows before and after each restart (issue 27; BENCHMARKS.md section
# 7); `make test` runs the same test with 4 s windows. ROLLING_STORE=off: the control run.
cluster-rolling: venv $(VENV)/.client-installed
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product adloader
	ROLLING_WINDOW=$${ROLLING_WINDOW:-60} $(VENV)/bin/python -m pytest -q -s Tests/python/test_cluster_rolling.py \
	  -k rolling_restart

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
# FUZZ_RUNS=10000000 runs each target to that many executions instead; every long run appends its
# count and commit to the results table of Fuzz/README.md.
fuzz: deps
	Fuzz/run.sh

# Per fuzz target: the code id of HEAD (Fuzz/code_id.py) and the runs recorded on that very code.
fuzz-status:
	Fuzz/run.sh --status

# A few seconds of each fuzz target from the committed seeds (part of `make test`).
fuzz-smoke: deps
	Fuzz/run.sh --smoke

# Rewrites the seed corpora (Fuzz/corpus/<target>/seed-*) from the targets' encoders.
fuzz-seeds: deps
	$(SWIFT) build
	for t in frame-decoder:FrameDecoderFuzz envelope:EnvelopeFuzz proto-scanner:ProtoScannerFuzz configuration:ConfigurationFuzz http2-session:HTTP2SessionFuzz bid-response:BidResponseFuzz consent:ConsentFuzz placement:PlacementFuzz tls-session:TLSSessionFuzz; do \
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

# One minute of the soak on the debug build, 5 s ads (part of `make test`). No journal compaction
# in it (1GiB): a compaction holds the pools' state twice for a moment, a few MiB of RSS, which a
# one-minute run judged on 2 MiB growth cannot tell from a leak; `make soak` compacts every 8 MiB.
soak-smoke: deps
	$(SWIFT) build --product adloaderd
	$(SWIFT) build --product ProtocolLoadBench
	$(SWIFT) build --product SoakBench
	.build/debug/SoakBench --minutes 1 --sample 2 --pressure 4 --pressure-rate 5000 --out bench-results/soak-smoke \
	  --compaction-size 1GiB

# Regenerates the committed protoc-c code from Proto/.
proto: venv
	dev/generate-proto.sh
	$(VENV)/bin/python clients/python/generate.py

clean:
	rm -rf .build .build-fuzz
