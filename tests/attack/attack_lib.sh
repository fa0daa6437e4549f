# SPDX-License-Identifier: LGPL-2.1-or-later
# The attack tests' shared verdicts, waits and scratch folder, sourced by
# tests/attack/test_*.sh: each attack either held (the defence worked) or
# failed, with why; the callers count both in nheld/nfailed and set $nobody.

held() { echo "held: $1"; nheld=$((nheld + 1)); }
failed() { echo "failed: $1${2:+ ($2)}"; nfailed=$((nfailed + 1)); }
# attack NAME WHY-IF-FAILED CONDITION...: runs the condition, held if it is true.
attack() {
	local name=$1 why=$2
	shift 2
	if "$@"; then held "$name"; else failed "$name" "$why"; fi
}
as_user() { setpriv --reuid="$nobody" --regid="$nobody" --clear-groups "$@"; }
# wait_for SECONDS COMMAND...: until the command succeeds (hang guard).
wait_for() {
	local n=$(($1 * 20))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}
alive() { kill -0 "$1" 2>/dev/null; }

# attack_workdir: $dir, a scratch folder the local user can reach (0755: it
# holds the sockets), and an EXIT trap that kills every pid in $pids, runs
# attack_extra_cleanup if the test defines one, and removes $dir.
attack_workdir() {
	dir=$(mktemp -d) || exit 1
	chmod 755 "$dir"
	pids=()
	trap attack_cleanup EXIT
}
attack_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if declare -F attack_extra_cleanup >/dev/null; then attack_extra_cleanup; fi
	rm -rf "$dir"
}
