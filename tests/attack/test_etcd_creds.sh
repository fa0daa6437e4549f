#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# etcd's user:password stays out of what other local users can read (the
# 4th attack campaign's finding 5; rcusysd(8), ETCD): given with
# --etcd-credentials FILE it is sent (HTTP basic) and appears in neither
# /proc/PID/cmdline, the log, STATUS nor METRICS; a file others may read,
# in a directory others may write, or not one user:password line is
# refused; a URL that still holds user:password@ is warned about (naming
# the risk, not the password), works, and no longer shows the password in
# /proc/PID/cmdline; both forms at once are refused, and so are a raw '/'
# or '@' in a URL's password and a repeated --etcd (the review of the
# campaign's fixes, 5a-5c). An error text of etcd's that echoes the
# credentials shows neither the password nor its base64 (5d), also not in
# rcusysd.etcd.last_error. rcusysctl --etcd
# takes them from $RCUSYSCTL_ETCD_CREDENTIALS. A stand-in for etcd
# records each request's Authorization header. Each case prints "held:
# NAME" or "failed: NAME (why)"; waits are hang guards only.
set -u
usage="usage: test_etcd_creds.sh RCUSYSD RCUSYSCTL"
rcusysd=${1:?$usage} cli=${2:?$usage}
nheld=0 nfailed=0 nobody=65534
command -v python3 > /dev/null || { echo "skip: python3 (the stand-in for etcd) is missing"; exit 77; }
. "$(dirname "$0")/attack_lib.sh"
attack_workdir

# The stand-in: answers every POST with {} and logs "PATH AUTHORIZATION";
# user eve gets a 401 whose error echoes her Authorization header and password.
cat > "$dir/gw.py" <<'EOF'
import base64, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization") or "none"
        with open(sys.argv[2], "a") as f:
            f.write("%s %s\n" % (self.path, auth))
        pair = base64.b64decode(auth[6:]).decode() if auth.startswith("Basic ") else ""
        if pair.startswith("eve:"):
            # A gateway that echoes what it was sent, as some proxies' 401 pages do.
            body = json.dumps({"error": {"code": 16, "message": "bad auth %s (%s)" % (auth, pair)}})
            self.send_response(401); self.end_headers(); self.wfile.write(body.encode())
            return
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
python3 "$dir/gw.py" "$dir/port" "$dir/gw.log" &
pids+=($!)
wait_for 20 test -s "$dir/port" || { echo "failed: the stand-in for etcd did not start"; exit 1; }
port=$(cat "$dir/port")
: > "$dir/gw.log"

said_ready() { grep -qF "rcusysd: ready: control socket $2/control.sock," "$1" 2>/dev/null; }
ready_or_gone() { said_ready "$2" "$3" || ! alive "$1"; }
# start RUN LOG ARGS...: sets $pid; 1 unless it said ready (hang guard 20 s).
start() {
	local run=$1 log=$2
	shift 2
	"$rcusysd" -d "$run" --no-fuse --no-persist --etcd-prefix /creds/ "$@" 2> "$log" &
	pid=$!
	pids+=("$pid")
	wait_for 20 ready_or_gone "$pid" "$log" "$run" && alive "$pid" && said_ready "$log" "$run"
}
stop() { kill -TERM "$1" && wait_for 30 eval "! kill -0 $1 2>/dev/null"; wait "$1" 2>/dev/null; }
sent() { grep -qxF "/v3/kv/range Basic $(printf %s "$1" | base64 -w0)" "$dir/gw.log"; }
# nowhere SECRET RUN LOG PID: the secret is in no place another user can read
# (the entry read as nobody).
nowhere() {
	local secret=$1 run=$2 log=$3 pid=$4 where=
	tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$secret" && where+=" cmdline"
	grep -qF -- "$secret" "$log" && where+=" log"
	"$cli" --socket "$run/control.sock" --status 2>&1 | grep -qF -- "$secret" && where+=" STATUS"
	"$cli" --socket "$run/control.sock" --metrics 2>&1 | grep -qF -- "$secret" && where+=" METRICS"
	as_user "$cli" --socket "$run/control.sock" -n rcusysd.etcd.last_error 2>&1 |
		grep -qF -- "$secret" && where+=" rcusysd.etcd.last_error"
	[ -z "$where" ] || { echo "the secret is in:$where" >&2; return 1; }
}

# ---- --etcd-credentials FILE ----
mkdir -m 700 "$dir/sec"
printf 'alice:S3cret-file-4711\n' > "$dir/sec/creds"
chmod 600 "$dir/sec/creds"
run=$dir/a
if start "$run" "$run.log" --etcd "http://127.0.0.1:$port" --etcd-credentials "$dir/sec/creds"; then
	attack "--etcd-credentials: sent as HTTP basic" "gateway saw: $(sort -u "$dir/gw.log" | head -3)" \
		wait_for 20 sent "alice:S3cret-file-4711"
	attack "--etcd-credentials: in no cmdline, log, STATUS, METRICS" "see above" \
		nowhere S3cret-file-4711 "$run" "$run.log" "$pid"
	attack "--etcd-credentials: no warning" "log: $(grep -F user:password "$run.log")" \
		eval '! grep -qF "user:password@" "$run.log"'
	stop "$pid"
else
	failed "start with --etcd-credentials" "log: $(tail -3 "$run.log")"
fi

# ---- a URL that holds user:password@ ----
: > "$dir/gw.log"
run=$dir/b
if start "$run" "$run.log" --etcd "http://bob:S3cret-url%21x@127.0.0.1:$port/"; then
	attack "URL credentials: still sent, %-decoded" "gateway saw: $(sort -u "$dir/gw.log" | head -3)" \
		wait_for 20 sent "bob:S3cret-url!x"
	attack "URL credentials: a warning naming the risk" "log: $(head -5 "$run.log")" \
		grep -qF "an endpoint holds user:password@, which every local user could read" "$run.log"
	attack "URL credentials: gone from cmdline, log, STATUS, METRICS" "see above" \
		nowhere S3cret-url "$run" "$run.log" "$pid"
	attack "URL credentials: STATUS names the endpoint without them" \
		"$("$cli" --socket "$run/control.sock" --status | grep endpoint)" \
		eval '"$cli" --socket "$run/control.sock" --status | grep -qxF "etcd.endpoint: http://127.0.0.1:$port"'
	stop "$pid"
else
	failed "start with URL credentials" "log: $(tail -3 "$run.log")"
fi

# ---- etcd's error echoes the credentials (a gateway's 401 page) ----
printf 'eve:S3cret-echo-4711\n' > "$dir/sec/eve"
chmod 600 "$dir/sec/eve"
run=$dir/e
if start "$run" "$run.log" --etcd "http://127.0.0.1:$port" --etcd-credentials "$dir/sec/eve"; then
	attack "an error echoing the credentials: it came" "log: $(grep -F etcd "$run.log" | tail -2)" \
		wait_for 20 grep -qF "bad auth Basic " "$run.log"
	attack "an error echoing the credentials: no password anywhere" "see above" \
		nowhere S3cret-echo "$run" "$run.log" "$pid"
	attack "an error echoing the credentials: no base64 of them anywhere" "see above" \
		nowhere "$(printf %s eve:S3cret-echo-4711 | base64 -w0)" "$run" "$run.log" "$pid"
	attack "an error echoing the credentials: nobody reads it hidden in the entry" \
		"$(as_user "$cli" --socket "$run/control.sock" -n rcusysd.etcd.last_error 2>&1)" \
		eval 'as_user "$cli" --socket "$run/control.sock" -n rcusysd.etcd.last_error |
			grep -qF "etcd: bad auth Basic *** (eve:***)"'
	stop "$pid"
else
	failed "start with credentials etcd echoes" "log: $(tail -3 "$run.log")"
fi

# ---- refused: each stops the start (exit 2), the reason named, never the secret ----
# refused NAME WANT ARGS...: rcusysd exits 2 within 10 s, its log holds WANT and no "S3cret".
refused() {
	local name=$1 want=$2 rc
	shift 2
	timeout 10 "$rcusysd" -d "$dir/r" --no-fuse --no-persist --etcd-prefix /creds/ "$@" > /dev/null 2> "$dir/r.log"
	rc=$?
	attack "$name" "rc=$rc; log: $(head -3 "$dir/r.log")" \
		eval '[ "$rc" = 2 ] && grep -qF -- "$want" "$dir/r.log" && ! grep -q S3cret "$dir/r.log"'
}
url="http://127.0.0.1:$port"
cp -p "$dir/sec/creds" "$dir/sec/open"
chmod 640 "$dir/sec/open"
refused "a file group may read" \
	"--etcd-credentials $dir/sec/open: refused: the file is readable by group or others (mode 0640)" \
	--etcd "$url" --etcd-credentials "$dir/sec/open"
mkdir -m 1777 "$dir/tmp"
cp -p "$dir/sec/creds" "$dir/tmp/creds"
refused "a file in a directory others may write" \
	"--etcd-credentials $dir/tmp/creds: refused: its directory is writable by group or others (mode 1777)" \
	--etcd "$url" --etcd-credentials "$dir/tmp/creds"
printf 'alice:S3cret\nmore\n' > "$dir/sec/two"
chmod 600 "$dir/sec/two"
refused "not one line" "--etcd-credentials $dir/sec/two: expected one line user:password" \
	--etcd "$url" --etcd-credentials "$dir/sec/two"
ln -s creds "$dir/sec/link"
refused "a symbolic link" "--etcd-credentials $dir/sec/link: refused: a symbolic link" \
	--etcd "$url" --etcd-credentials "$dir/sec/link"
refused "both forms" "--etcd-credentials and a user:password@ in --etcd: give them once" \
	--etcd "http://bob:S3cret@127.0.0.1:$port" --etcd-credentials "$dir/sec/creds"
# A raw '/' or '@' in a URL's password (RFC 3986 forbids both): a parser
# that stops at the first would leave the rest of the password in the
# endpoint named in the log and STATUS, or in the command line.
rule="holds a raw '/', '?', '#' or '@', which a URL's userinfo cannot (RFC 3986, 3.2.1)"
refused "a raw '/' in a URL's password" "$rule" --etcd "http://bob:pa/S3cret-slash@127.0.0.1:$port"
refused "a raw '@' in a URL's password" "$rule" --etcd "http://bob:p@S3cret-at@127.0.0.1:$port"
# A second --etcd would leave the first one's password unstarred in ps.
refused "--etcd given twice" "--etcd given twice: give every endpoint in one --etcd URL,URL" \
	--etcd "http://bob:S3cret-first@127.0.0.1:$port" --etcd "$url"
timeout 10 "$rcusysd" -d "$dir/r" --no-fuse --no-persist --etcd-credentials "$dir/sec/creds" > /dev/null 2> "$dir/r.log"
rc=$?
attack "without --etcd" "rc=$rc; log: $(head -3 "$dir/r.log")" \
	eval '[ "$rc" = 2 ] && grep -qF -- "--etcd-credentials needs --etcd" "$dir/r.log"'

# ---- rcusysctl --etcd: $RCUSYSCTL_ETCD_CREDENTIALS, private to its user ----
: > "$dir/gw.log"
RCUSYSCTL_ETCD_CREDENTIALS=carol:S3cret-env timeout 20 "$cli" --etcd "$url" --prefix /creds/ -a \
	> /dev/null 2> "$dir/cli.err"
attack "rcusysctl: \$RCUSYSCTL_ETCD_CREDENTIALS sent as HTTP basic" \
	"gateway saw: $(sort -u "$dir/gw.log" | head -3); $(head -2 "$dir/cli.err")" sent "carol:S3cret-env"
timeout 20 "$cli" --etcd "http://dave:S3cret-cli@127.0.0.1:$port" --prefix /creds/ -a > /dev/null 2> "$dir/cli.err"
attack "rcusysctl: a URL's credentials warned about, never printed" "stderr: $(head -3 "$dir/cli.err")" \
	eval 'grep -qF "an endpoint holds user:password@" "$dir/cli.err" && ! grep -q S3cret "$dir/cli.err"'

timeout 20 "$cli" --etcd "http://dave:pa/S3cret-cli@127.0.0.1:$port" --prefix /creds/ -a \
	> /dev/null 2> "$dir/cli.err"
rc=$?
attack "rcusysctl: a raw '/' in a URL's password refused, never printed" \
	"rc=$rc; stderr: $(head -3 "$dir/cli.err")" \
	eval '[ "$rc" = 1 ] && grep -qF "$rule" "$dir/cli.err" && ! grep -q S3cret "$dir/cli.err"'

echo "etcd-creds: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
