# SPDX-License-Identifier: GPL-2.0
# Functions of kernel/lockcmp/run (sourced): the trees, the kernels, the
# initramfs and the guests. They use run's variables (here, kdir,
# KERNEL_CACHE, STOCK_SRC, JOBS, logdir, ...) and its kcheck and say.

# make_tree VARIANT SERIES_DIR: sets $tree to a hard-linked copy of the
# stock tree with the series applied (patch -p1 replaces each file it
# changes, so the stock tree's files are never written), cached under the
# hash of the series; then puts the current harness into its fs/.
make_tree() {
	local variant=$1 sdir=$2 key tmp p
	key=$( { cat "$sdir/series"; for p in $(grep -v '^#' "$sdir/series"); do
		cat "$sdir/$p"; done; } | sha256sum | cut -c1-12)
	tree=$KERNEL_CACHE/src/klock-$variant
	if [ "$(cat "$tree/.lockcmp-key" 2>/dev/null)" != "$key" ]; then
		say "$variant tree: applying $sdir/series to $(basename "$STOCK_SRC")"
		tmp=$(mktemp -d "$tree.tmp.XXXXXX")
		rmdir "$tmp"
		cp -al "$STOCK_SRC" "$tmp"
		for p in $(grep -v '^#' "$sdir/series"); do
			if ! patch -d "$tmp" -p1 -s -f --no-backup-if-mismatch <"$sdir/$p" >&2; then
				rm -rf "$tmp"
				kcheck FAIL lockcmp-apply "$variant: $p does not apply"
				return 1
			fi
		done
		echo "$key" >"$tmp/.lockcmp-key"
		rm -rf "$tree"
		mv "$tmp" "$tree"
	fi
	[ "$variant" = rcu ] || return 0
	# The harness and the KUnit suite are not part of either series:
	# they are copied into lib/ and lib/tests/ of the RCU tree and built
	# in (sed -i writes a new Makefile, so the stock tree's stays as it is).
	cmp -s "$here/lockcmp_harness.c" "$tree/lib/lockcmp_harness.c" ||
		cp "$here/lockcmp_harness.c" "$tree/lib/lockcmp_harness.c"
	grep -q '^obj-y += lockcmp_harness.o$' "$tree/lib/Makefile" ||
		sed -i '$a obj-y += lockcmp_harness.o' "$tree/lib/Makefile"
	cmp -s "$here/lockcmp_kunit.c" "$tree/lib/tests/lockcmp_kunit.c" ||
		cp "$here/lockcmp_kunit.c" "$tree/lib/tests/lockcmp_kunit.c"
	grep -q '^obj-$(CONFIG_KUNIT) += lockcmp_kunit.o$' "$tree/lib/tests/Makefile" ||
		sed -i '$a obj-$(CONFIG_KUNIT) += lockcmp_kunit.o' "$tree/lib/tests/Makefile"
}

# build_kernel VARIANT FLAVOUR SRC: sets $built to the bzImage of
# tinyconfig + common.config + FLAVOUR.config built from SRC. make itself
# is the cache: the tree's and the harness's changed files are rebuilt.
build_kernel() {
	local variant=$1 flavour=$2 src=$3 out cfgkey lockfd missing line
	out=$KERNEL_CACHE/build/klock-$variant-$flavour
	cfgkey=$(cat "$here/common.config" "$here/$flavour.config" | sha256sum | cut -c1-12)
	mkdir -p "$out"
	exec {lockfd}>"$out.lock"
	flock $lockfd
	if [ "$(cat "$out/.lockcmp-cfg" 2>/dev/null)" != "$cfgkey" ]; then
		say "$variant-$flavour: configuring in $out"
		if ! { make -C "$src" O="$out" tinyconfig &&
			(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$out" \
				"$out/.config" "$here/common.config" "$here/$flavour.config") &&
			make -C "$src" O="$out" olddefconfig; } >"$out/config.log" 2>&1; then
			kcheck FAIL lockcmp-config-$variant-$flavour "see $out/config.log"
			flock -u $lockfd; return 1
		fi
		missing=
		while read -r line; do
			case $line in
			CONFIG_*=*) grep -qxF -- "$line" "$out/.config" || missing="$missing ${line%%=*}" ;;
			"# CONFIG_"*" is not set") line=${line#\# }; line=${line%% *}
				! grep -q "^$line=y" "$out/.config" || missing="$missing $line(on)" ;;
			esac
		done < <(cat "$here/common.config" "$here/$flavour.config")
		if [ -n "$missing" ]; then
			kcheck FAIL lockcmp-config-$variant-$flavour "not as asked in $out/.config:$missing"
			flock -u $lockfd; return 1
		fi
		echo "$cfgkey" >"$out/.lockcmp-cfg"
	fi
	say "$variant-$flavour: make bzImage in $out (log $out/build.log)"
	if ! nice -n 15 make -C "$src" O="$out" -j"$JOBS" bzImage >"$out/build.log" 2>&1; then
		tail -30 "$out/build.log" >&2
		kcheck FAIL lockcmp-build-$variant-$flavour "see $out/build.log"
		flock -u $lockfd; return 1
	fi
	flock -u $lockfd
	built=$out/arch/x86/boot/bzImage
}

# build_initramfs: sets $initramfs; cached by the hash of its inputs.
build_initramfs() {
	local key dir tmp
	key=$( { cat "$here/init" "$STOCK_SRC/usr/gen_init_cpio.c"; sha256sum "$BUSYBOX"; } |
		sha256sum | cut -c1-12)
	dir=$KERNEL_CACHE/boot/lockcmp-initramfs-$key
	initramfs=$dir/initramfs.cpio.gz
	[ -f "$initramfs" ] && return 0
	mkdir -p "$KERNEL_CACHE/boot"
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	if ! gcc -O2 -o "$tmp/gen_init_cpio" "$STOCK_SRC/usr/gen_init_cpio.c" >&2; then
		rm -rf "$tmp"; kcheck FAIL lockcmp-initramfs "gen_init_cpio does not build"
		return 1
	fi
	cat >"$tmp/list" <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /proc 0755 0 0
	dir /sys 0755 0 0
	dir /bin 0755 0 0
	file /bin/busybox $BUSYBOX 0755 0 0
	slink /bin/sh busybox 0777 0 0
	file /init $here/init 0755 0 0
	EOF
	"$tmp/gen_init_cpio" "$tmp/list" | gzip -n -9 >"$tmp/initramfs.cpio.gz"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

# boot_guest LOG BZIMAGE CPUS ARG...: boots the kernel on CPUS vCPUs (one
# socket each: SeaBIOS lists one CPU per socket in the MP table), ARGs on
# the command line; the console goes to $logdir/LOG.log. Returns 1 if the
# guest did not reach "lockcmp: done" (a hang, a crash, a timeout).
boot_guest() {
	local log=$1 kernel=$2 cpus=$3 t0 rc=0
	shift 3
	t0=$(date +%s)
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi \
		-smp "$cpus",sockets="$cpus",cores=1,threads=1 -m 512M \
		-nographic -no-reboot -kernel "$kernel" -initrd "$initramfs" \
		-append "console=ttyS0 panic=-1 nokaslr $*" \
		</dev/null 2>&1 | sed -u 's/\r$//' >"$logdir/$log.log" || rc=$?
	say "$log: guest ran $(($(date +%s) - t0)) s (status $rc), log $logdir/$log.log"
	grep -q '^lockcmp: done' "$logdir/$log.log"
}

# build_objects SRC: the files the lock series touches, compiled with W=1
# for x86_64 (tinyconfig + common.config) in a build directory of their
# own; make builds a single object even where the config leaves its
# directory out, as fs/ocfs2 here.
build_objects() {
	local src=$1 out=$KERNEL_CACHE/build/klock-lock-objects objs
	objs="kernel/sysctl.o fs/coredump.o kernel/module/kmod.o kernel/module/main.o
	      kernel/reboot.o kernel/ksysfs.o lib/kobject_uevent.o fs/ocfs2/stackglue.o"
	mkdir -p "$out"
	if [ ! -f "$out/.config" ]; then
		{ make -C "$src" O="$out" tinyconfig &&
		  (cd "$src" && scripts/kconfig/merge_config.sh -m -O "$out" \
			"$out/.config" "$here/common.config") &&
		  make -C "$src" O="$out" olddefconfig; } >"$out/config.log" 2>&1 || {
			kcheck FAIL lockcmp-lock-objects "configuring failed, see $out/config.log"
			return 1; }
	fi
	say "lock series: compiling the touched files with W=1 in $out"
	if ! nice -n 15 make -C "$src" O="$out" -j"$JOBS" W=1 $objs >"$out/build.log" 2>&1; then
		tail -30 "$out/build.log" >&2
		kcheck FAIL lockcmp-lock-objects "see $out/build.log"
		return 1
	fi
	if grep -E 'warning:' "$out/build.log" >&2; then
		kcheck FAIL lockcmp-lock-objects "W=1 warnings, see $out/build.log"
		return 1
	fi
	kcheck PASS lockcmp-lock-objects "the lock series' files compile with W=1, no warning"
}

# The context checks: the UML KUnit kernel of the RCU tree with the
# series' KUnit config (two CPUs, PREEMPT, lockdep, PROVE_RCU,
# DEBUG_ATOMIC_SLEEP, KASAN) and the lockcmp suite, run by kunit.py once
# as it is and once with the RCU reader broken on purpose; summary.py ctx
# judges the kernel logs.
run_ctx() {
	local src=$1 out=$KERNEL_CACHE/build/klock-um g args res
	local kunit=(python3 "$src/tools/testing/kunit/kunit.py")
	local common=(--arch=um --build_dir="$out" --timeout=900
		--kernel_args=ncpus=2 --kernel_args=seccomp=on --raw_output=all)
	say "ctx: UML KUnit kernel in $out (log $logdir/ctx-build.log)"
	if ! (cd "$src" && nice -n 15 "${kunit[@]}" build --arch=um --build_dir="$out" \
			--kunitconfig="$kdir/kunit/rcustring-7.3.kunitconfig" \
			--jobs="$JOBS") >"$logdir/ctx-build.log" 2>&1; then
		tail -30 "$logdir/ctx-build.log" >&2
		kcheck FAIL lockcmp-ctx-build "see $logdir/ctx-build.log"
		return 1
	fi
	for g in plain break; do
		args=()
		[ $g = break ] && args=(--kernel_args=lockcmp_kunit.break_rcu=1)
		(cd "$src" && "${kunit[@]}" exec "${common[@]}" "${args[@]}" 'lockcmp') \
			>"$logdir/ctx-$g.log" 2>&1 || true
		res=$(python3 "$here/summary.py" ctx "$logdir/ctx-$g.log")
		echo "$res"
		failures=$((failures + $(echo "$res" | grep -c '^kcheck FAIL' || true)))
		[ -n "$res" ] || kcheck FAIL lockcmp-ctx-$g "no lockcmp case ran, see $logdir/ctx-$g.log"
	done
}

# The timing guests: LC_BOOTS boots per vCPU count of the one perf kernel,
# which holds both protocols; then the medians over every round.
run_bench() {
	local kernel=$1 cpus boot logs=() out
	for cpus in $LC_CPUS; do
		for boot in $(seq "$LC_BOOTS"); do
			say "bench: $cpus vCPUs, boot $boot of $LC_BOOTS"
			boot_guest bench-$cpus-$boot "$kernel" "$cpus" \
				LC_ROUNDS="$LC_ROUNDS" LC_READS="$LC_READS" ||
				kcheck FAIL lockcmp-bench-$cpus-$boot "guest did not finish, see $logdir/bench-$cpus-$boot.log"
			logs+=("$logdir/bench-$cpus-$boot.log")
		done
	done
	out=$(python3 "$here/summary.py" bench "${logs[@]}")
	echo "$out"
	failures=$((failures + $(echo "$out" | grep -c '^kcheck FAIL' || true)))
}
