# Two entry points over CMake presets; see README.md.
#   make demo   installs what is missing, builds, runs the paper's scenario
#   make test   installs what is missing, builds with -Werror, runs every test
.PHONY: deps demo test bench clean

DEMO_ARGS = --hardware h100-dgx --model llama2-7b --gpus 128 --sharding shard_grad_op \
            --micro-batch 2 --seq-len 4096

deps:
	./scripts/install-deps

demo: deps
	cmake --preset release
	cmake --build --preset release
	./build/release/trainsim run $(DEMO_ARGS)

test: deps
	cmake --workflow --preset ci

bench: deps
	cmake --preset bench
	cmake --build --preset bench
	./build/bench/bench/trainsim_bench

clean:
	rm -rf build
