/* SPDX-License-Identifier: GPL-2.0 */
/* The record the helper writes and racetest reads: four space-separated,
 * fixed-width fields and a newline. Widths hold every value the test uses
 * (core_pattern is at most 128 bytes, the helper names far less).
 */
#ifndef RECORD_H
#define RECORD_H

#define REC_PATH "/rec.log"
#define REC_EXE_W 140
#define REC_ARGV0_W 140
#define REC_LAST_W 24
#define REC_DEV_W 48
#define REC_LEN (REC_EXE_W + 1 + REC_ARGV0_W + 1 + REC_LAST_W + 1 + REC_DEV_W + 1)
#define REC_FMT "%-140.140s %-140.140s %-24.24s %-48.48s\n"

#endif
