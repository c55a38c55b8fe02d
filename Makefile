# The README's two commands: `make demo` (tune the built-in ops on the default OpenCL device and
# show the result) and `make test`. Both install missing Debian packages first.
PRESET ?= release
.PHONY: deps build demo test asan tsan bench clean

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET)

demo: build
	scripts/demo.sh build/$(PRESET)

test: build
	ctest --preset $(PRESET)

asan:
	$(MAKE) test PRESET=asan

tsan:
	$(MAKE) test PRESET=tsan

bench: build
	build/$(PRESET)/bench/bench_dispatch

clean:
	rm -rf build
