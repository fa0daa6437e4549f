/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conversions between the text of the jiffies handlers and the jiffies
 * they store (jiffies.c). Internal to the library. Write (_w): the text's
 * sign and magnitude to the stored int, non-zero when it does not convert.
 * Read (_r): back.
 */
#ifndef RCUSTRING_LIB_SYSCTL_JIFFIES_H
#define RCUSTRING_LIB_SYSCTL_JIFFIES_H

#include <stdbool.h>

/* Seconds (proc_dointvec_jiffies). */
int rcs_jiffies_iconv_w(bool neg, unsigned long lval, int *v);
void rcs_jiffies_iconv_r(int v, bool *neg, unsigned long *lval);
/* 1/SYSCTL_USER_HZ seconds (proc_dointvec_userhz_jiffies). */
int rcs_userhz_iconv_w(bool neg, unsigned long lval, int *v);
void rcs_userhz_iconv_r(int v, bool *neg, unsigned long *lval);
/* Milliseconds (proc_dointvec_ms_jiffies). */
int rcs_ms_iconv_w(bool neg, unsigned long lval, int *v);
void rcs_ms_iconv_r(int v, bool *neg, unsigned long *lval);

#endif
