/* SPDX-License-Identifier: MIT */
/*
 * Kernel-compatible <linux/tracepoint.h>: build kernel-style events headers
 * unchanged with -I <prefix>/include/utrace/compat.  Adds the kernel's
 * short integer types, which such headers use freely, and the
 * DUMP_PREFIX_* of __print_hex_dump().
 */
#ifndef UTRACE_COMPAT_LINUX_TYPES_DEFINED
#define UTRACE_COMPAT_LINUX_TYPES_DEFINED
#include <stdint.h>
#include <sys/types.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#endif
#include "../../tracepoint.h"
#ifndef DUMP_PREFIX_NONE
#define DUMP_PREFIX_NONE UTRACE_DUMP_PREFIX_NONE
#define DUMP_PREFIX_ADDRESS UTRACE_DUMP_PREFIX_ADDRESS
#define DUMP_PREFIX_OFFSET UTRACE_DUMP_PREFIX_OFFSET
#endif
