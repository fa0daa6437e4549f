# SPDX-License-Identifier: LGPL-2.1-or-later
# The members of the structs a public header defines, "STRUCT MEMBER" a
# line (tests/test_man.sh holds each against the manual). Plain members,
# lists of them ("uint64_t open, read;"), arrays and function pointers.
/^struct [a-z_0-9]+ \{/ { st = $2; depth = 1; next }
st != "" {
	line = $0
	sub(/\/\*.*\*\//, "", line); sub(/\/\/.*/, "", line)
	if (line ~ /^[ \t]*\/?\*/) next
	if (line ~ /\{/) depth++
	if (line ~ /\}/) { depth--; if (depth == 0) { st = ""; next } }
	if (line !~ /;/) next
	if (line ~ /\(\*/) { m = line; sub(/^[^(]*\(\*/, "", m); sub(/\).*/, "", m); print st, m; next }
	sub(/;.*/, "", line); sub(/\[[^]]*\]/, "", line)
	n = split(line, parts, ",")
	for (i = 1; i <= n; i++) { w = parts[i]; sub(/^.*[ \t*]/, "", w); sub(/\[.*/, "", w); if (w ~ /^[a-z_][a-z0-9_]*$/) print st, w }
}
