# SPDX-License-Identifier: LGPL-2.1-or-later
# Thin wrapper over Meson: installs missing Debian packages, then builds.
#   make demo    build and run the main job
#   make check   build and run every test (plain, ASan+UBSan but suite 'once', valgrind, fuzz smoke,
#                the benchmark as a 0.1 s torn-read check: suite 'bench')
#   make bench   benchmarks (BENCH_SECONDS=N for short runs)
#   make fuzz    longer fuzzing runs (FUZZ_SECONDS=N per target)
#   make kernel-check  the standalone fixes and the v1 series on 7.3-rc7 in kernel/ (also part of make check)
#   make kernel-check-all  that with seven rate pairs, plus the 7.2.13 series and the 6.12 backport
#                (KTARGET=7.2 kernel/check --all), kernel/followups/check, kernel-selftests and kernel-lockcmp
#   make kernel-lockcmp  the RCU series against a lock-based alternative (kernel/lockcmp/run)
#   make kernel-check-7.3  the same as kernel-check (kernel/fixes/check, then kernel/check-7.3)
#   make kernel-selftests  the kernel's own sysctl and coredump selftests, stock vs patched 7.3-rc7
#                (kernel/selftests/run; part of kernel-check-all)
#   make package        the Debian packages (librcustring0, librcustring-dev, rcusysd) in
#                       $(DEB_BUILD)/ with dpkg-buildpackage -us -uc -b, then lintian
#   make package-check  that, then installs them into a fresh root and runs the demo there

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
DEB_BUILD  ?= build-deb
BENCH_SECONDS ?= 0.5
FUZZ_SECONDS  ?= 60
FUZZ_SMOKE_SECONDS ?= 10

# What the programs and the demo need (build and run)...
RUNTIME_PACKAGES = liburcu-dev libfuse3-dev fuse3 libjson-c-dev libcurl4-openssl-dev meson \
                   ninja-build pkg-config procps util-linux
# ...and what only the tests need (make check, fuzz).
TEST_PACKAGES = libcmocka-dev lxcfs valgrind clang libclang-rt-14-dev etcd-server etcd-client python3 man-db groff-base \
                openssl python3-prometheus-client $(BENCH_PACKAGES)
# ...and what drawing the bench's plots needs (make bench-report; in the test
# list too, so that the test of the report script runs in make check).
# Debian's own /usr/bin/python3 is the one that imports it (a python3 first
# on PATH, e.g. pyenv's, does not see Debian's modules).
BENCH_PACKAGES = python3-matplotlib
# ...and what building the Debian packages needs (make package).
PACKAGE_PACKAGES = debhelper dpkg-dev lintian
DEB_PACKAGES = $(RUNTIME_PACKAGES) $(TEST_PACKAGES) $(PACKAGE_PACKAGES)

.PHONY: all deps deps-runtime deps-package build demo check check-plain check-asan check-fuzz kernel-check kernel-check-all \
        kernel-check-7.3 kernel-lockcmp kernel-selftests bench bench-report deps-bench fuzz package package-check clean

all: build

# Install the Debian packages only when a check says something is missing.
deps-runtime:
	@missing=0; \
	for pc in liburcu-bp liburcu-cds fuse3 json-c libcurl; do \
	  pkg-config --exists $$pc 2>/dev/null || missing=1; done; \
	for cmd in meson ninja pkg-config sysctl unshare fusermount3; do \
	  command -v $$cmd >/dev/null 2>&1 || missing=1; done; \
	if [ $$missing = 1 ]; then \
	  echo "deps: installing Debian packages: $(RUNTIME_PACKAGES)"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(RUNTIME_PACKAGES); \
	fi

deps: deps-runtime
	@missing=0; \
	pkg-config --exists cmocka 2>/dev/null || missing=1; \
	for cmd in valgrind clang etcd etcdctl python3 man groff openssl; do \
	  command -v $$cmd >/dev/null 2>&1 || missing=1; done; \
	/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing=1; \
	/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing=1; \
	[ -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] || \
	  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || missing=1; \
	if [ $$missing = 1 ]; then \
	  echo "deps: installing Debian packages: $(TEST_PACKAGES)"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(TEST_PACKAGES); \
	fi

deps-bench:
	@if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then \
	  echo "deps: installing Debian packages: $(BENCH_PACKAGES)"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BENCH_PACKAGES); \
	fi

deps-package: deps-runtime
	@missing=0; \
	for cmd in dh dpkg-buildpackage lintian; do \
	  command -v $$cmd >/dev/null 2>&1 || missing=1; done; \
	if [ $$missing = 1 ]; then \
	  echo "deps: installing Debian packages: $(PACKAGE_PACKAGES)"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(PACKAGE_PACKAGES); \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dwerror=true

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

# The demo needs no test-only package; its build prints one line (the log
# is kept in $(BUILD)/demo-build.log and shown only when the build fails).
# Without cmocka a fresh build directory is set up without the tests.
demo: deps-runtime
	@echo "demo: building in $(BUILD) (log: $(BUILD)/demo-build.log)"; \
	mkdir -p $(BUILD); \
	{ [ -e $(BUILD)/build.ninja ] || \
	  meson setup $(BUILD) -Dwerror=true \
	    -Dtests=$$(pkg-config --exists cmocka && echo true || echo false); } \
	  > $(BUILD)/demo-build.log 2>&1 && \
	ninja -C $(BUILD) >> $(BUILD)/demo-build.log 2>&1 || \
	{ tail -n 30 $(BUILD)/demo-build.log; echo "demo: build failed"; exit 1; }
	@examples/demo.sh $(BUILD)

# The plain and ASan+UBSan suites and the fuzz smoke run two at a time
# (make -j2): most tests wait on processes, sockets and etcd, so one suite
# alone leaves a CPU idle. Each part's output is printed whole when it ends
# (--output-sync); every part runs even when one fails, then the kernel
# part, and the closing line counts both suites.
check: build
	@echo "check: the plain and ASan+UBSan suites and the fuzz smoke run two at a time; each one's output follows when it ends"
	@st=0; \
	$(MAKE) --no-print-directory -k -j2 --output-sync=target check-plain check-asan check-fuzz || st=1; \
	$(MAKE) --no-print-directory kernel-check || st=1; \
	tests/summarize $(BUILD)/meson-logs/testlog.json $(ASAN_BUILD)/meson-logs/testlog.json || st=1; \
	exit $$st

check-plain: build
	meson test -C $(BUILD) --print-errorlogs --num-processes 2

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false

check-asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --num-processes 2 --no-suite valgrind --no-suite once

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false

# Brief runs of every libFuzzer target over its corpus (longer: make fuzz).
check-fuzz: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) tests/fuzz/run-all $(FUZZ_BUILD)

fuzz: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-all $(FUZZ_BUILD)

# The standalone fixes (kernel/fixes/check) and the v1 series for mainline
# on Debian's linux-source-7.3 7.3~rc7-1~exp1 (fetched from experimental
# into $KERNEL_CACHE): checkpatch, per-patch builds, W=1 and sparse, KUnit
# under UML with two CPUs and the debug options, the QEMU KCSAN boot test.
# kernel-check-all adds seven rate pairs, the 7.2.13 series (v2, the same
# steps) with the 6.12 backport, and the follow-up series' checks and boot
# test (kernel/followups/check, kernel/boot/followups-boot-test): they left
# make check for its 60-minute cold budget. See kernel/README.md.
kernel-check:
	kernel/check

kernel-check-all:
	kernel/check --all; st=$$?; KTARGET=7.2 kernel/check --all || st=1; \
	kernel/followups/check || st=1; kernel/boot/followups-boot-test || st=1; \
	kernel/followups-7.3/check || st=1; \
	kernel/selftests/run || st=1; $(MAKE) kernel-lockcmp || st=1; exit $$st

# RCU or a lock, measured (kernel/lockcmp/run; kernel/README.md, "RCU or a
# lock: measured"): the lock alternative's patches checked and compiled, the
# readers a lock cannot serve under lockdep (UML KUnit), and reader latency
# and throughput of both on a non-debug QEMU guest. Not in make check.
kernel-lockcmp:
	kernel/lockcmp/run

# The standalone fixes and the v1 series for mainline, on Debian's
# linux-source-7.3 7.3~rc7-1~exp1: what kernel-check runs, in two commands.
kernel-check-7.3:
	kernel/fixes/check; st=$$?; kernel/check-7.3 || st=1; exit $$st

# tools/testing/selftests/sysctl and coredump in QEMU guests of stock 7.3-rc7
# and of 7.3-rc7 + the v1 series: a test that passes on stock must pass on
# patched. Not in make check (two more kernel builds and two guests).
kernel-selftests:
	kernel/selftests/run

# Each program prints its table, then `summary NAME VALUE` lines. The rcusysd
# they start read no configuration of the host's (rcusysd(8), ENVIRONMENT).
bench: build
	./$(BUILD)/bench/rcustring-bench --seconds $(BENCH_SECONDS)
	./$(BUILD)/bench/rcustring-tree-bench --seconds $(BENCH_SECONDS)
	./$(BUILD)/bench/rcustring-entry-lock-bench
	./$(BUILD)/bench/rcustring-snapshot-bench
	./$(BUILD)/bench/rcustring-tree-scale-bench
	./$(BUILD)/tests/frontend/rcustring-socket-bench --seconds 1
	./$(BUILD)/tests/tools/rcusysd-durable-bench --seconds 1
	bench/fuse_vs_kernel.sh ./$(BUILD)/tests/integration/sysctl-fixture 10 ./$(BUILD)/tools/rcusysctl/rcusysctl
	./$(BUILD)/bench/rcustring-fuse-count-bench
	RCUSYSD_SYSCTL_DIRS= RCUSYSD_TUNABLES_DIRS= tests/fleet/bench_fleet.sh ./$(BUILD)/tests/fleet/fleet-bench
	RCUSYSD_SYSCTL_DIRS= RCUSYSD_TUNABLES_DIRS= bench/rcusysd_scale.sh ./$(BUILD)/tools/rcusysd/rcusysd
	RCUSYSD_SYSCTL_DIRS= RCUSYSD_TUNABLES_DIRS= bench/settings_scale.sh ./$(BUILD)/tools/rcusysd/rcusysd
	RCUSYSD_SYSCTL_DIRS= RCUSYSD_TUNABLES_DIRS= bench/reload_answer.sh ./$(BUILD)/tools/rcusysd/rcusysd ./$(BUILD)/tools/rcusysctl/rcusysctl

# SVG plots from a saved `make bench > bench.log` (BENCH_LOG=bench.log); with
# no BENCH_LOG, a short `make bench` is run first and its log kept beside them.
BENCH_REPORT ?= $(BUILD)/bench-report
bench-report: deps-bench
	@log='$(BENCH_LOG)'; \
	if [ -z "$$log" ]; then \
	  mkdir -p $(BENCH_REPORT) && log=$(BENCH_REPORT)/bench.log; \
	  $(MAKE) --no-print-directory bench BENCH_SECONDS=0.2 > $$log || exit 1; \
	fi; \
	bench/report/bench_report.py "$$log" $(BENCH_REPORT)

# The packages are built from a copy of the tracked and new files in
# $(DEB_BUILD)/src, so that dpkg-buildpackage writes its .debs into
# $(DEB_BUILD)/, not beside the checkout. lintian at its default level
# (errors and warnings) must say nothing.
package: deps-package
	rm -rf $(DEB_BUILD) && mkdir -p $(DEB_BUILD)/src
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C $(DEB_BUILD)/src
	cd $(DEB_BUILD)/src && dpkg-buildpackage -us -uc -b
	@changes=$$(ls $(DEB_BUILD)/rcustring_*.changes); echo "lintian $$changes"; \
	out=$$(lintian "$$changes" 2>&1 | grep -v '^running with root privileges'); \
	if [ -n "$$out" ]; then echo "$$out"; echo "package: lintian is not clean"; exit 1; fi

package-check: package
	tests/test_package.sh $(DEB_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(DEB_BUILD)
