# Shortcuts over scripts/ and the CMake presets; see README.md.
.PHONY: deps demo test bench clean

deps:
	./scripts/install-deps

demo:
	./scripts/demo

test:
	./scripts/test

bench: deps
	cmake --preset bench
	cmake --build --preset bench
	./build/bench/bench/trainsim_bench

clean:
	rm -rf build
