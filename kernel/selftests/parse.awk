# SPDX-License-Identifier: GPL-2.0
# Reads a selftest guest's console log (kernel/selftests/init writes it)
# and prints one "PASS|FAIL|SKIP TEST [reason]" line per test and one
# "TIME BLOCK SECONDS" line per finished block. sysctl.sh prints no TAP:
# a run of one test id passes when it exits 0 and said no SKIPPING, skips
# when it says SKIPPING or exits 4 (ksft_skip), and fails otherwise or when
# it printed test_rc's "Failed test" line, the reason being its first FAIL
# line. The coredump tests print kselftest TAP:
# "ok N fixture.test [# SKIP why]" and "not ok N fixture.test". A block
# with no end line was cut off (the guest hung or timed out): FAIL.

function finish(rc,   res, why) {
	if (suite == "sysctl") {
		why = skipwhy != "" ? skipwhy : failwhy
		if (rc == 4 || skipwhy != "")
			res = "SKIP"
		else if (rc == 0 && !failed)
			res = "PASS"
		else
			res = "FAIL"
		if (res == "FAIL" && why == "")
			why = "exit status " rc
		print res, "sysctl-" name (res == "PASS" ? "" : " " why)
	} else if (taps == 0) {
		# No TAP line at all: the binary died before its first test.
		print "FAIL", name " exit status " rc " before any test"
	} else if (rc != 0 && fails == 0 && rc != 4) {
		print "FAIL", name " exit status " rc " after " taps " tests"
	}
	inblock = 0
}

/^==== begin / {
	if (inblock)
		print "FAIL", (suite == "sysctl" ? "sysctl-" : "") name " cut off"
	suite = $3; name = $4; inblock = 1
	skipwhy = ""; failwhy = ""; wantwhy = 0; taps = 0; fails = 0; failed = 0
	next
}
/^==== end / {
	rc = $5; sub(/^rc=/, "", rc)
	s = $6; sub(/^s=/, "", s)
	finish(rc + 0)
	print "TIME", suite "-" name, s
	next
}
!inblock { next }
suite == "sysctl" {
	if (wantwhy) {
		skipwhy = $0; wantwhy = 0
	}
	if (skipwhy == "" && $0 ~ /^Target .* SKIPPING$/)
		skipwhy = $0
	else if (skipwhy == "" && $0 ~ /SKIPPING$/)
		wantwhy = 1
	else if (skipwhy == "" && $0 ~ /\[SKIP\]/)
		skipwhy = $0
	if (failwhy == "" && $0 ~ /FAIL/ && $0 !~ /^Checking production write strict/)
		failwhy = $0
	# test_rc's line: with an empty rc it exits 0 all the same.
	if ($0 ~ /^Failed test, return value:/) {
		failed = 1
		if (failwhy == "")
			failwhy = $0
	}
	next
}
/^(not )?ok [0-9]+ / {
	taps++
	if ($1 == "not") {
		fails++
		print "FAIL", name ":" $4
	} else if ($0 ~ /# SKIP/) {
		why = $0
		sub(/.*# SKIP */, "", why)
		print "SKIP", name ":" $3, why
	} else {
		print "PASS", name ":" $3
	}
}
END {
	if (inblock)
		print "FAIL", (suite == "sysctl" ? "sysctl-" : "") name " cut off (no end line: the guest hung or timed out)"
}
