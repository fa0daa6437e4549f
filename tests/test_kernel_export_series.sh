#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel/scripts/export-series writes mails a submitter can send as they
# are: run it on every standalone fix (kernel/fixes/*) and on the 7.3
# series, against
# a stand-in kernel tree whose scripts/get_maintainer.pl prints fixed
# addresses (no kernel source is needed), and check every mail: git
# mailinfo reads the submitter as its author, the submitter's Signed-off-by:
# ends the trailers (only with --signoff), To: and Cc: hold what
# get_maintainer.pl gave, no placeholder address is left, and the cover
# letter names the base commit and the coredump fix by its patch id.
#   test_kernel_export_series.sh <source root>
set -euo pipefail
root=${1:?usage: $0 <source root>}
export_series=$root/kernel/scripts/export-series
author='Jane Doe <jane@example.org>'
tmp=$(mktemp -d "${TMPDIR:-/tmp}/export-series.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The stand-in tree: get_maintainer.pl answers by role.
mkdir -p "$tmp/tree/scripts"
cat >"$tmp/tree/scripts/get_maintainer.pl" <<'EOF'
my $m = grep { $_ eq '--m' } @ARGV;
if ($m) { print "Maint One <maint1\@example.org>\n"; }
else { print "Rev Two <rev2\@example.org>\nsome-list\@vger.example.org\n"; }
EOF

fixes=()
for d in "$root"/kernel/fixes/*/; do
	[ -f "$d/series" ] && fixes+=("${d%/}")
done
[ ${#fixes[@]} -gt 0 ] || fail "no kernel/fixes/*/series"

run() {	# out-dir [--signoff]
	python3 "$export_series" --author "$author" ${2:-} --tree "$tmp/tree" --out "$1" \
		"${fixes[@]}" "$root/kernel/patches-7.3" 2>"$1.log" ||
		{ cat "$1.log" >&2; fail "export-series exited with $?"; }
}

run "$tmp/signed" --signoff
fixdir=$tmp/signed/fix-coredump
apidir=$tmp/signed/patches-7.3
n_api=$(ls "$apidir"/*.patch | wc -l)
want_api=$(( $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/kernel/patches-7.3/series" | grep -vc /) + 1 ))
[ "$n_api" -eq "$want_api" ] || fail "patches-7.3: $n_api mails, want $want_api (patches and cover letter; the prerequisite is not sent again)"
# Each fix: one mail per patch of its series, and one per cover letter.
n_fix=0
for d in "${fixes[@]}"; do
	name=fix-$(basename "$d")
	got=$(ls "$tmp/signed/$name"/*.patch 2>/dev/null | wc -l)
	want=$(( $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$d/series" | wc -l) +
		$(ls "$d" | grep -c '^0000-.*\.patch$' || true) ))
	[ "$got" -eq "$want" ] || fail "$name: $got mails, want $want"
	n_fix=$((n_fix + got))
done
[ -d "$fixdir" ] || fail "no fix-coredump folder"

for m in "$tmp"/signed/fix-*/*.patch "$apidir"/*.patch; do
	name=${m#"$tmp/"}
	info=$(git mailinfo "$tmp/msg" "$tmp/patch" <"$m") || fail "$name: git mailinfo failed"
	grep -qx 'Author: Jane Doe' <<<"$info" || fail "$name: author is not the submitter: $info"
	grep -qx 'Email: jane@example.org' <<<"$info" || fail "$name: email is not the submitter's"
	grep -q '^To: .*Maint One <maint1@example.org>' "$m" || fail "$name: no To: from get_maintainer.pl"
	grep -A2 '^Cc: ' "$m" | grep -q 'some-list@vger.example.org' || fail "$name: no Cc: of the list"
	! grep -q 'rcustring@localhost' "$m" || fail "$name: the placeholder address is left"
	case $m in */0000-*) continue ;; esac
	[ -s "$tmp/patch" ] || fail "$name: no diff"
	# The sign-off is the last line of the message, once.
	[ "$(grep -c "^Signed-off-by: $author\$" "$tmp/msg")" -eq 1 ] ||
		fail "$name: not one Signed-off-by: of the submitter"
	[ "$(grep -v '^$' "$tmp/msg" | tail -n1)" = "Signed-off-by: $author" ] ||
		fail "$name: the sign-off does not end the trailers"
done

cover=$(ls "$apidir"/0000-*.patch)
base=$(sed -n 's/^base-commit: //p' "$cover")
[[ $base =~ ^[0-9a-f]{40}$ ]] || fail "cover letter: no base-commit"
want_id=$(git patch-id --stable <"$root"/kernel/fixes/coredump/0001-*.patch | cut -d' ' -f1)
grep -A1 '^base-commit: ' "$cover" | grep -qx "prerequisite-patch-id: $want_id" ||
	fail "cover letter: no prerequisite-patch-id $want_id after base-commit"
[ "$(grep -c '^prerequisite-patch-id: ' "$cover")" -eq 1 ] || fail "cover letter: prerequisite named twice"
grep -qF "+M:"$'\t'"$author" "$apidir"/0001-*.patch ||
	fail "0001: the MAINTAINERS entry does not name the submitter"

# Without --signoff nothing is signed: the DCO is the submitter's to give.
run "$tmp/unsigned"
! grep -rq '^Signed-off-by:' "$tmp/unsigned" || fail "a Signed-off-by: without --signoff"

# A malformed author is refused, with a message.
if python3 "$export_series" --author 'nobody' --signoff --tree "$tmp/tree" \
		--out "$tmp/bad" "$root/kernel/fixes/coredump" 2>"$tmp/bad.log"; then
	fail "--author 'nobody' was accepted"
fi
grep -q -- '--author must be' "$tmp/bad.log" || fail "no message for a bad --author"

echo "export-series: $n_fix mails of ${#fixes[@]} fixes + $n_api mails checked, signed, addressed; prerequisite $want_id"
