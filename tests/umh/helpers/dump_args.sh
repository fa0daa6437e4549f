#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Usage (path /bin/sh, argv "NAME" this-script ...): copies this shell's
# exact argv and environment, as execve() gave them (NUL-separated), to
# "$OUT.argv" and "$OUT.env".
cat /proc/$$/cmdline > "$OUT.argv.tmp" && cat /proc/$$/environ > "$OUT.env.tmp" &&
	mv "$OUT.env.tmp" "$OUT.env" && mv "$OUT.argv.tmp" "$OUT.argv"
