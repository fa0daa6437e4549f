# Sourced by the shell tests: check NAME EXPECTED ACTUAL counts a result and
# shows both sides on a mismatch; finish LABEL prints the closing line and
# returns non-zero if anything failed.
passed=0 failed=0

check() {
	if [ "$2" == "$3" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
	fi
}

finish() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
