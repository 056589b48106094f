# Trellis: `make run` starts the relay with its own Mosquitto; `make test` runs every test.
# Both first install what is missing (Debian/Ubuntu packages), so they work on a fresh machine.

SWIFT ?= swift
PREFIX ?= /usr/local
APT_PACKAGES := mosquitto mosquitto-clients libmosquitto-dev libsqlite3-dev libssl-dev openssl pkg-config postgresql prometheus \
	tcpdump tshark iproute2 ethtool tmux nftables
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test postgres build deps ha-deps ha-check deb deb-deps deb-check faults faults-short faults-deps bridge-faults bridge-faults-short bench bench-stores bench-scaling bench-instructions soak fuzz format format-check install uninstall clean embed

## deps: install Mosquitto, its client tools, the C libraries, the openssl tool (the TLS tests make
## their certificates with it), PostgreSQL (the tests start a throwaway cluster of their own) and Prometheus
## with promtool (the metrics tests check the exposition, the rules and the dashboard's queries against a
## Prometheus server of their own), tcpdump, tshark, iproute2 and ethtool (the wire import tests capture a test
## broker's traffic, in a network namespace of their own with segmentation offload off for the small-MTU case, and compare with Wireshark's MQTT
## dissector; wireshark-common is told first not to install dumpcap setuid, so it installs without a question)
## tmux (`trellis watch` is tested on the screen tmux keeps of it) and nftables (the MQTT client is tested against
## a broker link that drops packets silently, an nftables rule on the test broker's port), when any is missing.
deps:
	@if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ] \
	   || ! command -v mosquitto_sub >/dev/null 2>&1 \
	   || ! pkg-config --exists libmosquitto 2>/dev/null \
	   || [ ! -f /usr/include/sqlite3.h ] \
	   || [ ! -f /usr/include/openssl/ssl.h ] \
	   || ! command -v openssl >/dev/null 2>&1 \
	   || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
	   || ! command -v promtool >/dev/null 2>&1 \
	   || ! command -v prometheus >/dev/null 2>&1 \
	   || { ! command -v tcpdump >/dev/null 2>&1 && [ ! -x /usr/sbin/tcpdump ]; } \
	   || ! command -v tshark >/dev/null 2>&1 \
	   || { ! command -v ip >/dev/null 2>&1 && [ ! -x /usr/sbin/ip ]; } \
	   || { ! command -v ethtool >/dev/null 2>&1 && [ ! -x /usr/sbin/ethtool ]; } \
	   || ! command -v tmux >/dev/null 2>&1 \
	   || { ! command -v nft >/dev/null 2>&1 && [ ! -x /usr/sbin/nft ]; }; then \
		echo "installing $(APT_PACKAGES)"; \
		echo "wireshark-common wireshark-common/install-setuid boolean false" | $(SUDO) debconf-set-selections && \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

## The release build, one for every target here: the Swift runtime and Foundation linked in statically, so the
## binary needs only C libraries (the Debian package's) and starts with fewer pages to touch (docs/benchmark.md).
## Building them all one way keeps SwiftPM from rebuilding every module when one target asks for the other.
RELEASE_BUILD = $(SWIFT) build -c release --static-swift-stdlib
RELEASE_BIN = "$$($(SWIFT) build -c release --show-bin-path)"

## build: compile the release binary.
build: deps
	$(RELEASE_BUILD) --product trellis

## run: start Mosquitto from broker.conf and the relay; Ctrl-C stops both.
run: deps
	$(RELEASE_BUILD) --product trellis
	$(RELEASE_BIN)/trellis run

## test: the layout check (format-check), then unit tests and integration tests against real Mosquitto brokers
## on free loopback ports (and real python-socketio clients, from virtual environments under ~/.cache/trellis,
## and the official socket.io 1.x and 2.x browser clients in Debian's headless Chromium, Tests/SocketIO/browser),
## then MQTT discovery against a real Home Assistant (ha-check), the Debian package (deb-check), the fault
## matrix's short form (faults-short) and every fuzz target briefly (FUZZ_CHECK, Fuzz/run.sh --brief: 20,000 inputs or 10 seconds
## each from the committed corpus, under a minute, after about two minutes building the targets the first
## time). The PostgreSQL tests use a throwaway cluster (Tests/Postgres/cluster.sh) in a temporary
## directory on a free loopback port, named by TRELLIS_TEST_POSTGRES_URL and stopped and removed at the end
## whatever the outcome.
## Everything the tests write (brokers' persistence, state directories, the cluster) goes to a directory in
## memory (under TEST_TMP_ROOT: /dev/shm when it is writable), removed at the end, with any process still running
## from it (a broker or a trellis a crashed or interrupted test left behind): each test broker saves its
## state every second, and on a shared virtual disk one flush can stall for a minute, freezing the broker
## and timing out every test that talks to it. At most TEST_WIDTH test cases run at once
## (SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH): most of them start brokers, relays and databases, and
## hundreds at once on two cores starve some of them past their timeouts; 8 also finishes sooner than no
## limit. SWIFT_BACKTRACE=enable=no lets the one exit test's child crash at once instead of spending
## seconds of CPU symbolicating its backtrace. A failing run repeats the failing tests and their issues after its
## last line (Tests/swift-test.sh), where the tail of a CI log shows them.
TEST_WIDTH ?= 8
TEST_TMP_ROOT := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp})
test: deps format-check
	Tests/SocketIO/setup-venvs.sh
	Tests/Notifications/setup-venv.sh >/dev/null
	Tests/SocketIO/browser/setup.sh >/dev/null
	@TMPDIR=$$(mktemp -d "$(TEST_TMP_ROOT)/trellis-test.XXXXXX") && export TMPDIR && export SWIFT_BACKTRACE=enable=no && \
	export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) && \
	pg=$$(mktemp -d "$(TEST_TMP_ROOT)/trellis-pg.XXXXXX") && trap 'Tests/Postgres/cluster.sh stop "$$pg"; pkill -KILL -f -- "$$TMPDIR/" || true; rm -rf "$$TMPDIR"' EXIT && trap 'exit 130' INT TERM && \
	TRELLIS_TEST_POSTGRES_URL=$$(Tests/Postgres/cluster.sh start "$$pg") && export TRELLIS_TEST_POSTGRES_URL && \
	echo "PostgreSQL for the tests: $${TRELLIS_TEST_POSTGRES_URL##*@} (cluster in $$pg)" && \
	echo "$(SWIFT) test" && SWIFT=$(SWIFT) Tests/swift-test.sh && \
	echo "$(HA_CHECK)" && $(HA_CHECK) && \
	echo "$(DEB_CHECK)" && $(DEB_CHECK) && \
	echo "$(FAULTS_CHECK)" && $(FAULTS_CHECK) && \
	echo "$(FUZZ_CHECK)" && $(FUZZ_CHECK)

# ha-check, deb-check, faults-short and the brief fuzz run from within test's shell, which holds the PostgreSQL
# cluster; named through variables so that `make -n test` prints these lines instead of running them (make runs
# lines that name $(MAKE) even with -n). faults-short starts clusters of its own.
HA_CHECK = $(MAKE) --no-print-directory ha-check
DEB_CHECK = $(MAKE) --no-print-directory deb-check
FAULTS_CHECK = $(MAKE) --no-print-directory faults-short
FUZZ_CHECK = Fuzz/run.sh --brief

## format: rewrite every Swift file as swift-format (the toolchain's `swift format`) lays it out by .swift-format:
## four spaces, lines of at most 120 columns where code can be broken (a long string literal or comment is left as
## written). format-check, the first step of `make test`, fails on any file `format` would change, naming the line.
SWIFT_FILES := Package.swift Sources Tests Benchmarks Fuzz Plugins
format:
	$(SWIFT) format --in-place --recursive --parallel $(SWIFT_FILES)
format-check:
	$(SWIFT) format lint --strict --recursive --parallel $(SWIFT_FILES)

## postgres: start a throwaway PostgreSQL cluster like the one of `make test` and print its URL and the
## command that stops it, to run the PostgreSQL tests by hand:
##   TRELLIS_TEST_POSTGRES_URL=postgres://trellis:…@127.0.0.1:PORT/trellis swift test --filter Postgres
postgres: deps
	@pg=$$(mktemp -d) && url=$$(Tests/Postgres/cluster.sh start "$$pg") || { Tests/Postgres/cluster.sh stop "$$pg"; exit 1; }; \
	echo "export TRELLIS_TEST_POSTGRES_URL=$$url"; \
	echo "# stop it with: Tests/Postgres/cluster.sh stop $$pg"

## ha-deps: Home Assistant (Tests/HomeAssistant/requirements.txt) in a venv under ~/.cache/trellis, once.
ha-deps:
	@Tests/HomeAssistant/install.sh >/dev/null

## ha-check: start Home Assistant with its MQTT integration and recorder, run Trellis, check what Home Assistant shows.
ha-check: deps
	@python=$$(Tests/HomeAssistant/install.sh) && \
	$(SWIFT) build --build-tests >/dev/null && \
	"$$python" Tests/HomeAssistant/ha_check.py --trellis "$$($(SWIFT) build --show-bin-path)/trellis"

## deb-deps: Debian's tools that make and check the package (dpkg-dev, debhelper, help2man for the manual page,
## lintian, binutils' readelf, debootstrap, and sqlite3, with which the check takes a state back one schema
## version), when any is missing.
DEB_APT_PACKAGES := dpkg-dev debhelper help2man lintian binutils debootstrap sqlite3
deb-deps:
	@if ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1 \
	   || ! command -v help2man >/dev/null 2>&1 || ! command -v lintian >/dev/null 2>&1 \
	   || ! command -v readelf >/dev/null 2>&1 || [ ! -x /usr/sbin/debootstrap ] \
	   || ! command -v sqlite3 >/dev/null 2>&1; then \
		echo "installing $(DEB_APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(DEB_APT_PACKAGES); \
	fi

## deb: the Debian package trellis_<version>_<arch>.deb in this directory: a release build with the Swift
## runtime linked in statically (the binary needs only C libraries), packaged by packaging/build-deb.sh with
## debhelper (docs/packaging.md). Install it with `sudo apt-get install ./trellis_<version>_<arch>.deb`.
DEB_BINARY = $(RELEASE_BIN)/trellis
deb: deps deb-deps
	$(RELEASE_BUILD) --product trellis
	packaging/build-deb.sh $(DEB_BINARY) .

## deb-check: the package on a clean Debian 12 (Tests/Debian/check-package.sh, as root: through sudo for other
## users): lintian, then in a debootstrapped root (cached in ~/.cache/trellis) install with apt, Mosquitto and
## Trellis as the units run them, a plant answer and a button state, an upgrade that keeps the state and the
## edited configuration and migrates the state, remove and purge.
deb-check: deps deb-deps
	$(RELEASE_BUILD) --product trellis
	$(SUDO) Tests/Debian/check-package.sh $(DEB_BINARY)

## faults-deps: what the fault matrix needs besides deps: nftables (packet loss, as this kind of kernel may lack
## netem), a C compiler (Tests/Faults/clockshift.c steps a relay's clock), and its Python environment
## (Tests/Faults/setup-venv.sh: paho-mqtt 2, python-socketio 5, in ~/.cache/trellis/faults), when missing.
faults-deps: deps
	@if ! command -v nft >/dev/null 2>&1 && [ ! -x /usr/sbin/nft ] || ! command -v cc >/dev/null 2>&1; then \
		echo "installing nftables gcc"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nftables gcc; \
	fi
	@Tests/Faults/setup-venv.sh >/dev/null

## faults: the fault matrix (Tests/Faults/matrix.py, docs/reliability.md#the-fault-matrix), the long form: every
## fault × store × relays at least 20 times, each run with its own broker, cluster and relays under a steady load,
## on the release build; as root (namespaces, mounts). ARGS passes options: ARGS='--faults pg-fast --runs 3'.
## Failures' reasons and relay logs go to .build/faults/<time>/.
faults: faults-deps
	$(RELEASE_BUILD) --product trellis
	$(SUDO) env TRELLIS=$(RELEASE_BIN)/trellis "$$(Tests/Faults/setup-venv.sh)" Tests/Faults/matrix.py --runs 20 $(ARGS)

## faults-short: the short form, in make test: each fault of the short list (Tests/Faults/faults.py SHORT) twice,
## on the debug build, in about five minutes.
faults-short: faults-deps
	$(SWIFT) build --product trellis
	$(SUDO) env TRELLIS="$$($(SWIFT) build --show-bin-path)/trellis" "$$(Tests/Faults/setup-venv.sh)" Tests/Faults/matrix.py --short $(ARGS)

## bridge-faults: Trellis's bridge and Mosquitto's own bridge side by side through the same uplink faults
## (Tests/Faults/bridge.py, docs/bridge.md "Proven against real faults"): 100 QoS 1 messages a second on each,
## each fault (uplink cut, lossy and slow, flapping, the upstream broker SIGKILLed, the queue's holder
## SIGKILLed mid-backlog, the queue's bound reached) 3 times at a random moment, on the release build; as
## root (a network namespace). About 50 minutes after the build; prints a table with a Trellis and a
## Mosquitto row per fault.
## With ARGS='--upstream ejabberd' the upstream brokers are ejabberd's MQTT service instead of Mosquitto: another
## implementation of MQTT v5 (Debian's ejabberd, which is not installed here: its package starts a service of its
## own on every address; bridge.py says what to do). ejabberd keeps sessions in memory, so upstream-kill is left out.
## ARGS passes options: ARGS='--faults cut,flap --runs 5 --seed 7'. Logs go to .build/bridge-faults/<time>/.
bridge-faults: faults-deps
	$(RELEASE_BUILD) --product trellis
	$(SUDO) env TRELLIS=$(RELEASE_BIN)/trellis "$$(Tests/Faults/setup-venv.sh)" Tests/Faults/bridge.py $(ARGS)

## bridge-faults-short: the short form, each fault once for a few seconds at 50 messages a second, on the
## debug build: about three minutes. Not part of make test.
bridge-faults-short: faults-deps
	$(SWIFT) build --product trellis
	$(SUDO) env TRELLIS="$$($(SWIFT) build --show-bin-path)/trellis" "$$(Tests/Faults/setup-venv.sh)" Tests/Faults/bridge.py --short $(ARGS)

## bench: Trellis against the minimal C relay, in release mode (`make bench ARGS=--quick` for a short run).
bench: deps
	$(RELEASE_BUILD) --product trellis
	$(RELEASE_BUILD) --product trellis-bench
	$(RELEASE_BIN)/trellis-bench $(ARGS)

## bench-stores: one relay on SQLite, one on PostgreSQL and two on PostgreSQL with $share, beside the C relay, on a
## throwaway PostgreSQL cluster (release build; `make bench-stores ARGS=--quick` for a short run).
bench-stores: deps
	$(RELEASE_BUILD) --product trellis
	$(RELEASE_BUILD) --product trellis-bench
	@pg=$$(mktemp -d) && trap 'Tests/Postgres/cluster.sh stop "$$pg"' EXIT && trap 'exit 130' INT TERM && \
	url=$$(Tests/Postgres/cluster.sh start "$$pg") && \
	$(RELEASE_BIN)/trellis-bench --stores "$$url" $(ARGS)

## bench-scaling: how a request's cost grows with the state (1×, 10×, 100× of the bench's state), on SQLite and on a
## throwaway PostgreSQL cluster (release build; `make bench-scaling ARGS=--quick` for a short run, ARGS=--scales=1,10 to stop earlier).
bench-scaling: deps
	$(RELEASE_BUILD) --product trellis
	$(RELEASE_BUILD) --product trellis-bench
	@pg=$$(mktemp -d) && trap 'Tests/Postgres/cluster.sh stop "$$pg"' EXIT && trap 'exit 130' INT TERM && \
	url=$$(Tests/Postgres/cluster.sh start "$$pg") && \
	$(RELEASE_BIN)/trellis-bench --scaling --stores "$$url" $(ARGS)

## bench-instructions: instructions per plant request, counted under valgrind's callgrind, for Trellis and the C relay
## (Benchmarks/instructions.sh; steady where timings are not: docs/benchmark.md). ARGS: [REQUESTS] [QOS] [TRELLIS FLAGS…].
bench-instructions: deps
	@command -v valgrind >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq valgrind; }
	$(RELEASE_BUILD) --product trellis
	TRELLIS=$(RELEASE_BIN)/trellis Benchmarks/instructions.sh $(ARGS)

## soak: the long fault tests (20 SIGKILLs during bursts of 10,000 QoS 1 presses, ...).
soak: deps
	TRELLIS_SOAK=1 $(SWIFT) test --filter KillRecovery

## fuzz: 1,000,000 inputs through each fuzz target (libFuzzer + ASan; Fuzz/Targets): the plant protocol parser, every
## MQTT payload decoder (sensor readings, presses, registrations, device messages), the Socket.IO endpoint's
## decoders (polling bodies, WebSocket frames, Socket.IO packets), every JSON service's request reader, the readers
## of `trellis plants import-host` (host.py's userdata), `trellis catalog import` (USDA CSV) and `trellis capture
## import` (capture lines; pcap/pcapng and MQTT). What they find that adds coverage joins Fuzz/corpus/<target>/;
## a crash leaves its input in Fuzz/crashes/. One target: `Fuzz/run.sh 1000000 PlantMessageFuzz`.
fuzz:
	Fuzz/run.sh 1000000

## install: the release binary, the systemd units (trellis.service; trellis@.service, N relays sharing a
## PostgreSQL store, with /etc/trellis/trellis.env.example) and the example configuration (PREFIX, DESTDIR).
install: build
	install -D -m 0755 $(RELEASE_BIN)/trellis "$(DESTDIR)$(PREFIX)/bin/trellis"
	install -D -m 0644 deploy/trellis.service "$(DESTDIR)/etc/systemd/system/trellis.service"
	install -D -m 0644 deploy/trellis@.service "$(DESTDIR)/etc/systemd/system/trellis@.service"
	sed -i 's|/usr/local/bin/trellis|$(PREFIX)/bin/trellis|' "$(DESTDIR)/etc/systemd/system/trellis.service" "$(DESTDIR)/etc/systemd/system/trellis@.service"
	install -D -m 0644 deploy/trellis.env.example "$(DESTDIR)/etc/trellis/trellis.env.example"
	install -D -m 0644 broker.conf "$(DESTDIR)/etc/trellis/broker.conf"
	@if [ -f trellis.example.yaml ]; then install -D -m 0644 trellis.example.yaml "$(DESTDIR)/etc/trellis/trellis.example.yaml"; fi

## uninstall: remove what install put in place (state in /var/lib/trellis and /etc/trellis/trellis.env are kept).
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/trellis" "$(DESTDIR)/etc/systemd/system/trellis.service" "$(DESTDIR)/etc/systemd/system/trellis@.service"
	rm -f "$(DESTDIR)/etc/trellis/broker.conf" "$(DESTDIR)/etc/trellis/trellis.example.yaml" "$(DESTDIR)/etc/trellis/trellis.env.example"
	-rmdir "$(DESTDIR)/etc/trellis" 2>/dev/null

clean:
	rm -rf .build .build-fuzz

## embed: copy broker.conf into the binary's embedded default (a test keeps the two equal).
embed:
	{ printf 'extension EmbeddedBrokerConfig {\n    /// The text of `broker.conf`; a test keeps the two identical.\n    public static let text = #"""\n'; \
	  cat broker.conf; printf '\n"""#\n}\n'; } > Sources/TrellisRelay/Broker/EmbeddedBrokerConfig+Text.swift
