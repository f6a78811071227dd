/* SPDX-License-Identifier: MIT */
/* Protocol buffers, the writing half (protobuf.h). */
#include "protobuf.h"

/* A message of 128 bytes or more: its length takes more than the byte
 * left for it, so the message moves up. */
void utrace__pb_end_long(struct utrace__obuf *b, size_t start)
{
	size_t n = b->len - start, k = utrace__pb_varint_len(n);

	utrace__ob_reserve(b, k - 1);
	if (b->cap - b->len < k - 1)
		return;
	memmove(b->p + start + k - 1, b->p + start, n);
	utrace__pb_varint_at((unsigned char *)b->p + start - 1, n);
	b->len += k - 1;
}
