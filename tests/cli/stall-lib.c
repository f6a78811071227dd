/* SPDX-License-Identifier: MIT */
/* The 200 events of stall-events.h, and a function that fires each once. */
#define CREATE_TRACE_POINTS
#include "stall-events.h"

#define FIRE(n) trace_stall_##n(k++, 4096, 3, 0);
#define FIRE10(p) FIRE(p##0) FIRE(p##1) FIRE(p##2) FIRE(p##3) FIRE(p##4) \
	FIRE(p##5) FIRE(p##6) FIRE(p##7) FIRE(p##8) FIRE(p##9)

void stall_fire_all(void);
void stall_fire_all(void)
{
	u32 k = 0;

	FIRE10(00) FIRE10(01) FIRE10(02) FIRE10(03) FIRE10(04)
	FIRE10(05) FIRE10(06) FIRE10(07) FIRE10(08) FIRE10(09)
	FIRE10(10) FIRE10(11) FIRE10(12) FIRE10(13) FIRE10(14)
	FIRE10(15) FIRE10(16) FIRE10(17) FIRE10(18) FIRE10(19)
}
