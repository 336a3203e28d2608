# vireo: `make run` and `make test` do everything on a fresh Debian machine; `make install`
# installs the server, its file checkers, a config and a systemd unit under PREFIX (README.md, "Install").
PACKAGES := cmake ninja-build g++ libasio-dev libfmt-dev libspdlog-dev libgtest-dev libjemalloc-dev \
            libbenchmark-dev libxxhash-dev redis-server redis-tools python3-redis python3-pytest \
            python3-pytest-xdist \
            liblua5.1-0-dev libssl-dev openssl
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
# Where `make install` puts things; DESTDIR, if set, is prepended to every installed path (a
# staging directory for packaging), and the files still name the paths without it.
PREFIX ?= /usr/local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build server tools install build-asan run test test-release test-asan fuzz fuzz-args fuzz-restore fuzz-resp bench compare format clean

all: build

# Installs only the packages that are missing; silent when everything is present.
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)

# Everything: the server, tests, fuzzers, benchmarks and load tools.
build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The server binary alone, all that `run` and `install` need.
server: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target vireo-server

# The file checkers (vireo-check-aof, vireo-check-rdb) that `install` puts beside the server.
tools: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target vireo-check-aof vireo-check-rdb

run: server
	mkdir -p data
	./$(BUILD_DIR)/vireo-server conf/vireo.conf

# The installed paths are written into the unit and the config, so they are fixed when the
# build is configured: a PREFIX other than the build directory's reconfigures it first.
install: server tools
	@[ "$$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' $(BUILD_DIR)/CMakeCache.txt)" = "$(PREFIX)" ] || \
	  cmake -S . -B $(BUILD_DIR) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD_DIR)

# The whole suite twice: the Release build, then the sanitizer build (ASan + UBSan, leak
# detection on), whose run includes every fuzz target's short run. A crash or sanitizer report
# in either fails `make test`.
test: test-release test-asan

test-release: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j 2

build-asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIREO_SANITIZE=ON -DVIREO_MICROBENCH=OFF
	cmake --build $(ASAN_DIR) -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j 2

# Long fuzz runs on demand, sanitizer build, 10^6 iterations (commands for argfuzz) each; see
# docs/robustness.md. FUZZ_SEED empty: seed 1 for the binaries, a random (printed) one for argfuzz.
FUZZ_ITERATIONS ?= 1000000
FUZZ_SEED ?=

fuzz: fuzz-resp fuzz-restore fuzz-args

fuzz-resp: build-asan
	./$(ASAN_DIR)/resp_parser_fuzz --seed $(or $(FUZZ_SEED),1) --iterations $(FUZZ_ITERATIONS)

fuzz-restore: build-asan
	./$(ASAN_DIR)/restore_fuzz --seed $(or $(FUZZ_SEED),1) --iterations $(FUZZ_ITERATIONS)

fuzz-args: build-asan
	VIREO_SANITIZED=1 /usr/bin/python3 tests/fuzz/argfuzz.py --vireo ./$(ASAN_DIR)/vireo-server \
	  --ops $(FUZZ_ITERATIONS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED)) --keep-going --progress 500

bench: build
	@for b in $(BUILD_DIR)/*_bench; do echo "== $$b"; $$b; done

compare: build
	/usr/bin/python3 bench/compare --vireo ./$(BUILD_DIR)/vireo-server

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
