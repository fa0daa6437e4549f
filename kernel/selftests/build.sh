# SPDX-License-Identifier: GPL-2.0
# Sourced by kernel/selftests/run: builds (or finds in the cache) the guest
# kernels and the initramfs that carries the kernel's own sysctl and
# coredump selftests. The selftests are built once, from the stock tree, so
# the stock and the patched guest run the very same binaries; only the
# kernel differs. Every result is keyed by what it is made of, so a warm
# run builds nothing.
# Needs from run: here, KERNEL_CACHE, JOBS, STOCK_SRC, say, kcheck.

# build_kernel NAME SRC: sets $built to the bzImage path. The build
# directory is keyed by the tree (its name carries the Debian version and
# the series hash) and by guest.config.
build_kernel() {
	local name=$1 src=$2 treekey out lockfd missing line cfghash t0
	cfghash=$(sha256sum "$here/guest.config" | cut -c1-12)
	treekey=$(basename "$src")
	treekey=${treekey#*-}
	out=$KERNEL_CACHE/build/kselftest-x86-$name-$treekey-$cfghash
	mkdir -p "$out"
	exec {lockfd}>"$out.lock"
	flock $lockfd
	if [ -f "$out/.rcustring-kselftest-built" ] && [ -f "$out/arch/x86/boot/bzImage" ]; then
		say "$name kernel: cached in $out"
		flock -u $lockfd
		built=$out/arch/x86/boot/bzImage
		return 0
	fi
	say "$name kernel: building in $out (make -j$JOBS; log $out/build.log)"
	t0=$(date +%s)
	if ! {
		nice -n 15 make -C "$src" O="$out" tinyconfig &&
		(cd "$src" && nice -n 15 scripts/kconfig/merge_config.sh -m -O "$out" \
			"$out/.config" "$here/guest.config") &&
		nice -n 15 make -C "$src" O="$out" olddefconfig
	} >"$out/build.log" 2>&1; then
		tail -20 "$out/build.log" >&2
		kcheck FAIL "selftests-config-$name" "configuring failed, see $out/build.log"
		flock -u $lockfd; return 1
	fi
	# Kconfig drops an option whose dependencies are missing without a
	# word; a guest without TEST_SYSCTL would only skip.
	missing=
	while read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		grep -qxF -- "$line" "$out/.config" || missing="$missing ${line%%=*}"
	done <"$here/guest.config"
	if [ -n "$missing" ]; then
		kcheck FAIL "selftests-config-$name" "not set in $out/.config:$missing"
		flock -u $lockfd; return 1
	fi
	if ! nice -n 15 make -C "$src" O="$out" -j"$JOBS" bzImage >>"$out/build.log" 2>&1; then
		tail -30 "$out/build.log" >&2
		kcheck FAIL "selftests-build-$name" "see $out/build.log"
		flock -u $lockfd; return 1
	fi
	echo "$(( $(date +%s) - t0 ))" >"$out/.build-seconds"
	touch "$out/.rcustring-kselftest-built"
	flock -u $lockfd
	say "$name kernel: built in $(cat "$out/.build-seconds") s"
	built=$out/arch/x86/boot/bzImage
}

# build_extra_kernel NAME SRC BASE_SRC BASE_OUT PATCH: the kernel of SRC,
# a copy of BASE_SRC with PATCH applied (extra_tree), built incrementally
# from a copy of BASE_SRC's build directory BASE_OUT; sets $built. Kbuild
# records absolute source paths in every .cmd file, so a copy at another
# path would rebuild everything (half an hour here): the make runs in a
# private mount namespace where SRC and the copy are bind-mounted over
# BASE_SRC and BASE_OUT, which nothing outside it sees, and only what PATCH
# touches is compiled again (the touched files are made newer than the
# base's objects).
build_extra_kernel() {
	local name=$1 src=$2 base_src=$3 base_out=$4 patch=$5 out t0 f lockfd
	out=${base_out%/*}/kselftest-x86-$name-$(basename "$src" | sed 's/^kselftest-//')
	exec {lockfd}>"$out.lock"
	flock $lockfd
	if [ -f "$out/.rcustring-kselftest-built" ] && [ -f "$out/arch/x86/boot/bzImage" ]; then
		say "$name kernel: cached in $out"
		flock -u $lockfd
		built=$out/arch/x86/boot/bzImage
		return 0
	fi
	say "$name kernel: $base_out + $(basename "$patch"), built again in $out"
	t0=$(date +%s)
	rm -rf "$out"
	cp -a "$base_out" "$out"
	rm -f "$out/.rcustring-kselftest-built"
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch" | while read -r f; do
		touch "$src/$f"
	done
	# shellcheck disable=SC2016 # the inner sh expands its own arguments
	if ! unshare -m --propagation private sh -c \
		'mount --bind "$1" "$2" && mount --bind "$3" "$4" &&
		 exec nice -n 15 make -C "$2" O="$4" -j"$5" bzImage' \
		sh "$src" "$base_src" "$out" "$base_out" "$JOBS" >"$out/build.log" 2>&1; then
		tail -30 "$out/build.log" >&2
		kcheck FAIL "selftests-build-$name" "see $out/build.log"
		flock -u $lockfd; return 1
	fi
	echo "$(( $(date +%s) - t0 ))" >"$out/.build-seconds"
	touch "$out/.rcustring-kselftest-built"
	flock -u $lockfd
	say "$name kernel: built in $(cat "$out/.build-seconds") s"
	built=$out/arch/x86/boot/bzImage
}

# build_selftests DIR: the coredump selftests as static binaries, against
# the stock tree's UAPI headers ("make headers" into DIR/obj, not into the
# tree; headers_install would need rsync), with the harness's own Makefile
# flags (-O0 -g -Wall, lib.mk's -D_GNU_SOURCE= and -I selftests).
# coredump_test_helpers.c uses offsetof() without <stddef.h> (upstream
# 7.3-rc7; with this glibc nothing else pulls it in): -include stddef.h
# instead of a change to the test.
build_selftests() {
	local dir=$1 st=$STOCK_SRC/tools/testing/selftests t
	nice -n 15 make -C "$STOCK_SRC" O="$dir/obj" headers >"$dir/headers.log" 2>&1 || {
		tail -20 "$dir/headers.log" >&2; return 1; }
	mkdir -p "$dir/coredump"
	for t in stackdump_test coredump_socket_test coredump_socket_protocol_test; do
		gcc -static -pthread -Wall -O0 -g -D_GNU_SOURCE= -I "$st" -include stddef.h \
			-isystem "$dir/obj/usr/include" -isystem "$STOCK_SRC/tools/include/uapi" \
			-o "$dir/coredump/$t" "$st/coredump/$t.c" \
			"$st/coredump/coredump_test_helpers.c" >&2 || return 1
	done
}

# initramfs_list DIR: gen_init_cpio's list. bash, perl and getconf (which
# sysctl.sh needs besides busybox) are the host's own, with the shared
# libraries ldd names for them.
initramfs_list() {
	local dir=$1 st=$STOCK_SRC/tools/testing/selftests b lib app
	cat <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /proc 0755 0 0
	dir /sys 0755 0 0
	dir /tmp 1777 0 0
	dir /bin 0755 0 0
	dir /usr 0755 0 0
	dir /usr/bin 0755 0 0
	dir /lib 0755 0 0
	dir /lib/x86_64-linux-gnu 0755 0 0
	dir /lib64 0755 0 0
	dir /kselftest 0755 0 0
	dir /kselftest/sysctl 0755 0 0
	dir /kselftest/coredump 0755 0 0
	file /bin/busybox $BUSYBOX 0755 0 0
	file /init $here/init 0755 0 0
	file /kselftest/sysctl/sysctl.sh $st/sysctl/sysctl.sh 0755 0 0
	file /kselftest/sysctl/config $st/sysctl/config 0644 0 0
	file /kselftest/coredump/stackdump $st/coredump/stackdump 0755 0 0
	EOF
	for b in stackdump_test coredump_socket_test coredump_socket_protocol_test; do
		echo "file /kselftest/coredump/$b $dir/coredump/$b 0755 0 0"
	done
	for b in bash perl getconf; do
		echo "file /usr/bin/$b $(readlink -f "$(command -v $b)") 0755 0 0"
	done
	ldd "$(command -v bash)" "$(command -v perl)" "$(command -v getconf)" |
		grep -o '/[^ ]*\.so[^ ]*' | sort -u | while read -r lib; do
		echo "file $lib $(readlink -f "$lib") 0755 0 0"
	done
	for app in $("$BUSYBOX" --list); do
		case $app in busybox|bash|perl|getconf) continue ;; esac
		echo "slink /bin/$app busybox 0777 0 0"
	done
	echo "slink /usr/bin/env ../../bin/busybox 0777 0 0"
}

# build_initramfs: sets $built to the initramfs path, cached by the hash
# of its inputs.
build_initramfs() {
	local key dir tmp
	key=$( { cat "$here/init" "$here/build.sh"; sha256sum "$BUSYBOX" \
		"$(readlink -f "$(command -v bash)")" "$(readlink -f "$(command -v perl)")";
		basename "$STOCK_SRC"; gcc --version; } | sha256sum | cut -c1-12)
	dir=$KERNEL_CACHE/boot/kselftest-initramfs-$key
	if [ -f "$dir/initramfs.cpio.gz" ]; then
		say "initramfs: cached in $dir"
		built=$dir/initramfs.cpio.gz; return 0
	fi
	mkdir -p "$KERNEL_CACHE/boot"
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	if ! build_selftests "$tmp" ||
	   ! gcc -O2 -o "$tmp/gen_init_cpio" "$STOCK_SRC/usr/gen_init_cpio.c" >&2; then
		rm -rf "$tmp"; kcheck FAIL selftests-initramfs "building the selftests failed"
		return 1
	fi
	initramfs_list "$tmp" >"$tmp/list"
	"$tmp/gen_init_cpio" "$tmp/list" | gzip -n -6 >"$tmp/initramfs.cpio.gz"
	rm -rf "$tmp/obj"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	say "initramfs: built $dir/initramfs.cpio.gz"
	built=$dir/initramfs.cpio.gz
}
