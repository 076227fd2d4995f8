# The two commands a new user runs: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
PORT ?= 6379

.PHONY: all setup build run test bench clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	mkdir -p data
	$(BUILD_DIR)/kvstore-server --port $(PORT) --dir ./data

# The suite, then the verbs suite in the Soft-RoCE guest (tests/softroce/; it says so plainly
# when this machine cannot boot the guest). Both run even if the first fails.
test: build
	@rc=0; (cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)) || rc=1; \
	tests/softroce/run-verbs-suite.sh $(BUILD_DIR) || rc=1; exit $$rc

bench: build
	python3 bench/redis_bench.py

clean:
	rm -rf $(BUILD_DIR)
