# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by test_trust.sh: the etcd mirror against a fake gateway
# (tests/fleet/fake_gateway.py, over http and over https) that holds a
# program of the attacker's for kernel.modprobe: refused without
# --etcd-allow-exec, and with it over http; applied, and logged at notice,
# only with it over https; --etcd-user holds the mirror to that user's bits.
# A watch delivering 10 000 values of kernel.modprobe (each refused) logs
# a burst and a suppressed count, and every refusal is counted.
if [ "$etcd" != etcd ]; then
	echo "skip: etcd cases: rcusysd built without etcd support"
	return 0
fi
if ! command -v python3 > /dev/null || ! command -v openssl > /dev/null; then
	echo "skip: etcd cases: python3 and openssl are needed for the fake gateway"
	[ "${CI:-}" = true ] && failed "python3 and openssl must be there on CI"
	return 0
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$dir/gw.key" -out "$dir/gw.pem" 2> "$dir/openssl.err" || {
	failed "a certificate for the https gateway" "$(cat "$dir/openssl.err")"
	return 0
}
P=/rcustring/web/
b64() { printf '%s' "$1" | base64 -w0; }
kv() { printf '{"key":"%s","mod_revision":"5","value":"%s"}' "$(b64 "$P$1")" "$(b64 "$2")"; }
range="{\"header\":{\"revision\":\"5\"},\"kvs\":[$(kv kernel/modprobe "$dir/evil"),$(kv good/val 5),$(kv open/val from-etcd)]}"
created='{"result":{"header":{"revision":"5"},"created":true}}'
python3 -c 'import json, sys
print(json.dumps({"/v3/kv/range": [{"body": sys.argv[1]}],
                  "/v3/watch": [{"lines": [sys.argv[2]], "then": "hold"}],
                  "/v3/kv/txn": [{"body": "{\"header\":{\"revision\":\"6\"}}"}]}))' \
	"$range" "$created" > "$dir/etcd.json"

# etcd_start NAME http|https [rcusysd args]: a gateway and a daemon on it; sets $run, $log.
etcd_start() {
	local name=$1 scheme=$2 tls=
	shift 2
	[ "$scheme" = https ] && tls="$dir/gw.pem:$dir/gw.key"
	FAKE_GATEWAY_TLS=$tls python3 "$gateway" "${scenario:-$dir/etcd.json}" "$dir/$name.port" "$dir/$name.requests" \
		2> "$dir/$name.gw.err" &
	pids+=($!)
	wait_for 20 test -s "$dir/$name.port"
	run=$dir/e-$name log=$dir/e-$name.log
	start "$run" "$log" --no-fuse --no-persist -t "$t/tunables.conf" --etcd-prefix "$P" \
		--etcd "$scheme://127.0.0.1:$(cat "$dir/$name.port")" --etcd-cacert "$dir/gw.pem" "$@" || {
		failed "etcd $name: the daemon starts" "log: $(tail -3 "$log")"
		return 1
	}
	# The first read applied what it may: open.val (0666) is everyone's.
	wait_for 20 eval '[ "$(ctl "$run" -n open.val)" = from-etcd ]' ||
		failed "etcd $name: the first read" "open.val is $(ctl "$run" -n open.val); log: $(tail -3 "$log")"
}
refusal="refused the etcd mirror's write of kernel.modprobe: an entry root executes: the etcd mirror may set it only with --etcd-allow-exec and https:// endpoints"

if etcd_start plain http; then
	refused "etcd over http: kernel.modprobe refused" "$log" "$refusal" "$run" kernel.modprobe /sbin/modprobe
	attack "etcd over http: the rest applied (good.val, mode 0644)" "good.val is $(ctl "$run" -n good.val)" \
		test "$(ctl "$run" -n good.val)" = 5
	attack "etcd over http: warned at start" "log: $(grep -m1 etcd "$log")" \
		logged "$log" "--etcd endpoint http://127.0.0.1:"
	"$rcusysd" -d "$run" -e "MODULE foo" > /dev/null
	attack "etcd over http: its program never ran as root" "it ran as uid $(cat "$dir/pwned" 2>/dev/null)" test ! -e "$dir/pwned"
	stop "$pid"
fi
if etcd_start optin-http http --etcd-allow-exec; then
	refused "etcd over http with --etcd-allow-exec: still refused" "$log" "$refusal (an endpoint is not https)" "$run" kernel.modprobe /sbin/modprobe
	attack "--etcd-allow-exec over http: said ignored" "log: $(grep -m1 allow-exec "$log")" \
		logged "$log" "--etcd-allow-exec: ignored, an endpoint is not https"
	stop "$pid"
fi
if etcd_start tls https; then
	refused "etcd over https without --etcd-allow-exec: refused" "$log" "$refusal" "$run" kernel.modprobe /sbin/modprobe
	stop "$pid"
fi
if etcd_start optin-tls https --etcd-allow-exec; then
	wait_for 20 eval '[ "$(ctl "$run" -n kernel.modprobe)" = "$dir/evil" ]'
	attack "etcd over https with --etcd-allow-exec: applied, logged at notice with its revision" \
		"it is $(ctl "$run" -n kernel.modprobe); log: $(grep -m2 modprobe "$log")" \
		eval '[ "$(ctl "$run" -n kernel.modprobe)" = "$dir/evil" ] && grep -qE "notice rcusysd: etcd sets kernel.modprobe, an entry root executes \(--etcd-allow-exec; etcd revision [1-9][0-9]*\)" "$log"'
	stop "$pid"
fi
if etcd_start user http --etcd-user "$nobody:$nobody"; then
	refused "--etcd-user: a 0644 entry refused to that user" "$log" \
		"refused ${P}good/val at revision 5 (1 bytes): Permission denied" "$run" good.val 1
	stop "$pid"
fi

# Escape codes and newlines from etcd (the 4th campaign's findings 6 and
# 7): a key holding ESC, CR and a forged log line, and a watch canceled
# with a reason that holds STATUS lines; then the watch hangs, so the
# reason stays etcd.last_error. The log holds no control byte, STATUS
# one etcd.connected line and the reason escaped on its own line, and the
# entry rcusysd.etcd.last_error, read as nobody, the same escaped text
# (C1, U+2028 and U+202E included).
python3 -c 'import base64, json, sys
b = lambda s: base64.b64encode(s.encode()).decode()
P = sys.argv[3]
evil = P + "open/val\x1b[2J\x1b[H\r2026-12-07T06:00:00.000Z notice rcusysd: FORGED LINE"
kv = lambda k, v: {"key": b(k), "mod_revision": "5", "value": b(v)}
rng = json.dumps({"header": {"revision": "5"}, "kvs": [kv(P + "open/val", "from-etcd"), kv(evil, "x")]})
cancel = json.dumps({"result": {"header": {"revision": "6"}, "canceled": True,
                     "cancel_reason": "gone\netcd.connected 1\netcd.connected: 1\x1b]0;owned\x07\x1b[31m\r"
                                      "\u009b31m\u2028LS\u202eRLO"}})
print(json.dumps({"/v3/kv/range": [{"body": rng}],
                  "/v3/watch": [{"lines": [sys.argv[2], cancel], "then": "close"}, {"hang": True}],
                  "/v3/kv/txn": [{"body": "{\"header\":{\"revision\":\"6\"}}"}]}))' \
	"$range" "$created" "$P" > "$dir/inject.json"
if scenario=$dir/inject.json etcd_start inject http; then
	wait_for 20 grep -q "watch canceled" "$log"
	st=$(ctl "$run" --status)
	reason="http://127.0.0.1:$(cat "$dir/inject.port"): watch canceled: gone\x0aetcd.connected 1\x0aetcd.connected: 1\x1b]0;owned\x07\x1b[31m\x0d\xc2\x9b31m\xe2\x80\xa8LS\xe2\x80\xaeRLO"
	attack "etcd escape codes: the log holds no control byte" \
		"$(LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x7f]' "$log" | cat -v | head -3)" \
		eval '! LC_ALL=C grep -qaP "[\x00-\x09\x0b-\x1f\x7f]" "$log"'
	attack "etcd escape codes: the key's forged line stays inside its own, escaped" \
		"$(grep -a FORGED "$log" | cat -v | head -2)" \
		eval '! grep -qa "^2026-12-07T06:00:00.000Z" "$log" &&
			grep -qaF "refused ${P}open/val\x1b[2J\x1b[H\x0d2026-12-07T06:00:00.000Z notice rcusysd: FORGED LINE at revision 5" "$log"'
	attack "etcd cancel reason: STATUS has one etcd.connected line" \
		"$(printf '%s\n' "$st" | grep -a '^etcd\.' | cat -v)" \
		test "$(printf '%s\n' "$st" | grep -c '^etcd\.connected')" = 1
	attack "etcd cancel reason: STATUS shows it escaped as etcd.last_error" \
		"$(printf '%s\n' "$st" | grep -a 'last_error' | cat -v)" \
		eval 'printf "%s\n" "$st" | grep -qxF "etcd.last_error: $reason"'
	# The tree entry serves the same text to every user: escaped where it
	# is stored, not only where STATUS prints it (the review's 7a).
	entry=$(as_user "$cli" --socket "$run/control.sock" -n rcusysd.etcd.last_error)
	attack "etcd cancel reason: nobody reads it escaped in rcusysd.etcd.last_error" \
		"$(printf '%s\n' "$entry" | cat -v)" test "$entry" = "$reason"
	stop "$pid"
fi

# The flood: one watch reply of 10 000 events for kernel.modprobe.
python3 -c 'import base64, json, sys
b = lambda s: base64.b64encode(s.encode()).decode()
ev = [{"kv": {"key": b(sys.argv[3] + "kernel/modprobe"), "mod_revision": str(r),
              "value": b(sys.argv[4])}} for r in range(6, 10006)]
flood = json.dumps({"result": {"header": {"revision": "10005"}, "events": ev}})
print(json.dumps({"/v3/kv/range": [{"body": sys.argv[1]}],
                  "/v3/watch": [{"lines": [sys.argv[2], flood], "then": "hold"}],
                  "/v3/kv/txn": [{"body": "{\"header\":{\"revision\":\"10006\"}}"}]}))' \
	"$range" "$created" "$P" "$dir/evil" > "$dir/flood.json"
mirror_refused() {
	"$cli" --socket "$run/control.sock" --metrics | awk '$1 == "rcusysd_policy_refused_total{origin=\"mirror\"}" { print $2 }'
}
if scenario=$dir/flood.json etcd_start flood http; then
	wait_for 60 eval '[ "$(mirror_refused)" -ge 10001 ]'
	n=$(mirror_refused)
	stop "$pid" # the suppressed counts are logged at the latest at exit
	lines=$(grep -c "refused the etcd mirror's write of kernel.modprobe" "$log")
	left=$(sed -n 's/.*refused writes (EPERM) of the etcd mirror: \([0-9]*\) similar messages suppressed.*/\1/p' "$log" |
		awk '{ s += $1 } END { print s + 0 }')
	echo "measured: etcd flood: $n refusals counted, $lines policy lines + $left suppressed, $(grep -c "etcd: " "$log") etcd lines, $(wc -l < "$log") log lines"
	grep "etcd: " "$log" | sed 's/^[^ ]* //' | sort | uniq -c | sort -rn | head -5
	attack "etcd flood: 10 000 refused values are counted" "counted $n" test "$n" -ge 10001
	attack "etcd flood: the policy's lines are a burst per window" "$lines lines" test "$lines" -le 30
	attack "etcd flood: lines and suppressed counts add up to every refusal" "$lines + $left of $n" \
		test $((lines + left)) = "$n"
	attack "etcd flood: the sync's own lines stay few" "$(grep -c 'etcd: ' "$log") lines" \
		test "$(grep -c "etcd: " "$log")" -le 30
	attack "etcd flood: the log stays small" "$(wc -l < "$log") lines" test "$(wc -l < "$log")" -le 100
fi
