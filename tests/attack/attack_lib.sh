# SPDX-License-Identifier: LGPL-2.1-or-later
# The attack tests' shared verdicts and waits, sourced by test_attack.sh and
# test_trust.sh: each attack either held (the defence worked) or failed,
# with why; the callers count both in nheld/nfailed and set $nobody.

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
