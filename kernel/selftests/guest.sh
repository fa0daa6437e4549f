# SPDX-License-Identifier: GPL-2.0
# Sourced by kernel/selftests/run: the tree with an extra patch, booting a
# guest, and comparing the two guests' per-test results. The comparison is
# the point of the whole run: a selftest that passes on stock must pass on
# patched; one that does not pass on stock says nothing about the series
# and is reported as a skip, with stock's reason.
# Needs from run: here, KERNEL_CACHE, QEMU_TIMEOUT, KS_MAX_COUNT, initramfs, logdir,
# say, kcheck.

# extra_tree SRC PATCH: prints the path of a copy of SRC with PATCH applied
# (hard links for everything the patch does not change: patch(1) writes a
# changed file anew, so SRC itself is never modified).
extra_tree() {
	local src=$1 patch=$2 key dir tmp
	key=$( { basename "$src"; cat "$patch"; } | sha256sum | cut -c1-12)
	dir=$KERNEL_CACHE/src/kselftest-$(basename "$src")-extra-$key
	if [ ! -f "$dir/.rcustring-complete" ]; then
		tmp=$(mktemp -d "$dir.tmp.XXXXXX")
		cp -al "$src/." "$tmp/"
		rm -f "$tmp/.rcustring-complete"
		(cd "$tmp" && patch -s -p1 --no-backup-if-mismatch) <"$patch" >&2 || {
			rm -rf "$tmp"; return 1; }
		touch "$tmp/.rcustring-complete"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	echo "$dir"
}

# run_guest NAME BZIMAGE: boots the guest, leaves the console log in
# $logdir/NAME.log and the parsed results in $logdir/NAME.results
# ("RESULT TEST [reason]" lines).
# A guest whose kernel and initramfs are the ones of a finished earlier
# run is not booted again (KS_NO_CACHE=1 boots it anyway): the build
# directories are keyed by what they are built from, and a boot takes
# minutes.
run_guest() {
	local name=$1 kernel=$2 t0 rc=0 secs key
	key="$kernel $(stat -c %Y "$kernel") $initramfs KS_MAX_COUNT=$KS_MAX_COUNT"
	if [ -z "${KS_NO_CACHE:-}" ] && [ "$(cat "$logdir/$name.key" 2>/dev/null)" = "$key" ] &&
	   grep -q '^kselftest-guest: done' "$logdir/$name.log" 2>/dev/null; then
		say "$name guest: cached results of $(stat -c %y "$logdir/$name.log" | cut -c1-16)"
		report_guest "$name"
		return 0
	fi
	rm -f "$logdir/$name.key"
	say "$name guest: booting (console log $logdir/$name.log)"
	t0=$(date +%s)
	# Two sockets of one core: SeaBIOS lists one CPU per socket in the MP
	# table the kernel reads without ACPI. boot_int=1 is what sysctl
	# test 0007 checks (it can only pass with test_sysctl built in).
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi \
		-smp 2,sockets=2,cores=1,threads=1 -m 512M \
		-nographic -no-reboot -kernel "$kernel" -initrd "$initramfs" \
		-append "console=ttyS0 panic=-1 quiet nokaslr sysctl.debug.test_sysctl.boot_int=1 KS_MAX_COUNT=$KS_MAX_COUNT" \
		</dev/null 2>&1 | sed -u 's/\r$//' >"$logdir/$name.log" || rc=$?
	secs=$(( $(date +%s) - t0 ))
	say "$name guest: ran $secs s (QEMU exit status $rc)"
	echo "guest $secs" >"$logdir/$name.seconds"
	awk -f "$here/parse.awk" "$logdir/$name.log" >"$logdir/$name.results"
	# The panic message may follow on the same console line.
	if ! grep -q '^kselftest-guest: done' "$logdir/$name.log"; then
		report_guest "$name"
		kcheck FAIL "selftests-guest-$name" \
			"did not finish in $QEMU_TIMEOUT s; $(grep '^==== begin' "$logdir/$name.log" | tail -1)"
		return 1
	fi
	echo "$key" >"$logdir/$name.key"
	report_guest "$name"
}

# report_guest NAME: the results and timings of one guest on stdout.
report_guest() {
	local name=$1 test s
	if [ -f "$logdir/$name.seconds" ]; then
		read -r test s <"$logdir/$name.seconds"
		echo "kselftest-time $name $test $s"
	fi
	grep '^TIME ' "$logdir/$name.results" | while read -r _ test s; do
		echo "kselftest-time $name $test $s"
	done
	grep -v '^TIME ' "$logdir/$name.results" | sed "s/^/kselftest $name /"
}

# compare STOCK PATCHED: one kcheck line per test seen on either kernel.
compare() {
	local s=$logdir/$1.results p=$logdir/$2.results test sres pres why
	if ! grep -qv '^TIME ' "$s"; then
		kcheck FAIL selftests-stock "no test result in $logdir/$1.log"
		return
	fi
	grep -hv '^TIME ' "$s" "$p" | awk '{ print $2 }' | sort -u | while read -r test; do
		sres=$(awk -v t="$test" '$2 == t { print $1; exit }' "$s")
		pres=$(awk -v t="$test" '$2 == t { print $1; exit }' "$p")
		why=$(awk -v t="$test" '$2 == t { sub(/^[^ ]+ +[^ ]+ */, ""); print; exit }' "$s")
		case ${sres:-NONE}/${pres:-NONE} in
		PASS/PASS) kcheck PASS "selftest-$test" ;;
		PASS/*) kcheck FAIL "selftest-$test" "passes on stock, ${pres:-no result} on $2" ;;
		*) kcheck SKIP "selftest-$test" "${sres:-no result} on stock${why:+: $why}; ${pres:-no result} on $2" ;;
		esac
	done | tee "$logdir/compare"
	failures=$((failures + $(grep -c '^kcheck FAIL' "$logdir/compare" || true)))
}
