# Top-level entry points: `make demo` and `make test` install what is missing, configure,
# build, and then run the demo or every test. Everything is built under build/.
BUILD ?= build
JOBS ?= 2
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

.PHONY: all deps configure build demo test test-unit clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > $(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh

test: build
	@cd $(BUILD) && ctest --output-on-failure --timeout 1200

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
