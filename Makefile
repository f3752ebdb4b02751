# skb-frag-destructor: a kernel patch series against v3.1 and the harness
# that proves it. `make demo` is the main job, `make test` the test suite.

BUILD_DIR ?= $(CURDIR)/build
export BUILD_DIR

CFLAGS_COMMON := -O2 -Wall -Wextra -Werror -std=gnu11
GUEST_TESTS   := $(patsubst guest/%.c,%,$(filter-out guest/init.c,$(wildcard guest/*.c)))
GUEST_BINS    := $(BUILD_DIR)/initramfs/init $(GUEST_TESTS:%=$(BUILD_DIR)/initramfs/bin/kfrag-%)
HOST_BINS     := $(patsubst host/%.c,$(BUILD_DIR)/host/%,$(wildcard host/*.c))
HEADERS       := $(wildcard common/*.h guest/*.h)
# QEMU TCG plugin: guest instruction counts (scripts/vmrun VM_INSNCOUNT)
PLUGIN        := $(BUILD_DIR)/qemu-plugin/insncount.so

.PHONY: all deps demo test kernels initramfs host plugin clean bench faults faults-debug acceptance soak matrix matrix-debug
all: initramfs host

deps:
	@scripts/deps

demo: deps
	@scripts/demo

test: deps
	@tests/run

# Long runs, not in `make test`:
bench: deps       # benchmarks -> docs/results/bench.md + PNGs
	@scripts/bench
faults: deps      # robustness scenarios, vanilla beside series
	@scripts/faults
faults-debug: deps
	@DEBUG=1 scripts/faults
acceptance: deps  # every profile, NFSv3 TCP+UDP and NFSv4.1 TCP, 2 vCPUs, >= 100,000 series writes; then fio, Connectathon, fsx
	@scripts/acceptance
	@scripts/real-clients
matrix: deps      # every emulated NIC the series converted, MTU 1500/9000, vanilla beside series -> docs/matrix.md
	@scripts/matrix
matrix-debug: deps # the same on the debug kernels (DEBUG_PAGEALLOC, slab poisoning, kmemleak)
	@DEBUG=1 scripts/matrix
soak: deps        # 30 min of the hostile profile, 8 writers -> docs/results/soak.md
	@scripts/soak

kernels: initramfs host
	@for v in vanilla series; do scripts/build-kernel $$v || exit 1; done

# Guest programs are static: the initramfs has no libc.
$(BUILD_DIR)/initramfs/init: guest/init.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -static -o $@ $<

$(BUILD_DIR)/initramfs/bin/kfrag-%: guest/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -static -o $@ $<

$(BUILD_DIR)/host/%: host/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(LDLIBS_$*)

# a shared object QEMU dlopen()s; the API it calls is resolved from the
# qemu-system binary at load time
$(PLUGIN): qemu-plugin/insncount.c qemu-plugin/qemu-plugin-api.h common/insnmark.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -shared -fPIC -fvisibility=hidden -o $@ $< -lpthread

# the red test's oracles and their test-capture generator read/write pcap
LDLIBS_wire-oracle := -lpcap
LDLIBS_mkfixture := -lpcap

$(BUILD_DIR)/initramfs.cpio.gz: $(GUEST_BINS)
	cd $(BUILD_DIR)/initramfs && find . -mindepth 1 | LC_ALL=C sort | \
		cpio --quiet -o -H newc -R 0:0 | gzip -9n > $@.tmp
	mv $@.tmp $@

initramfs: $(BUILD_DIR)/initramfs.cpio.gz
host: $(HOST_BINS) $(PLUGIN)
plugin: $(PLUGIN)

clean:
	rm -rf $(BUILD_DIR)/initramfs $(BUILD_DIR)/initramfs.cpio.gz $(BUILD_DIR)/host $(BUILD_DIR)/qemu-plugin $(BUILD_DIR)/logs
