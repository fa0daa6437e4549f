#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Usage: wait_for.sh FILE: exits 0 once FILE exists, 1 after about 10 s.
i=0
while [ ! -e "$1" ]; do
	i=$((i + 1))
	[ $i -gt 1000 ] && exit 1
	sleep 0.01
done
exit 0
