// SPDX-License-Identifier: MIT
/*
 * A plain program (no utrace in it) for string fetches (t3122, issue 30
 * item 4): take_key(key, nkey) gets keys that are not NUL-terminated,
 * memcached's way (a key inside the request line, its length beside
 * it); take_str(s) gets NUL-terminated strings of every length 0..299
 * (the inline path's and record()'s sizes).  Prints on stdout what a
 * probe should record, one line a call:
 *   key: k="KEY" n=N        (probe: k=+0(%di):string[%si] n=%si:u64)
 *   str: s="S"              (probe: s=+0(%di):string)
 * The last key ends at a page's last byte, before a PROT_NONE page; then
 * one key runs into it: "key: k=(fault) n=N".
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__clang__)
#define PROBED __attribute__((noinline, used))
#else
#define PROBED __attribute__((noipa, used))
#endif

void take_key(const char *key, size_t nkey);
void take_str(const char *s);

static volatile size_t sink;

PROBED void take_key(const char *key, size_t nkey)
{
	sink += nkey + (nkey ? (unsigned char)key[0] : 0);
}

PROBED void take_str(const char *s)
{
	sink += (unsigned char)s[0];
}

static void key(const char *k, size_t n, int fault)
{
	take_key(k, n);
	if (fault)
		printf("key: k=(fault) n=%zu\n", n);
	else
		printf("key: k=\"%.*s\" n=%zu\n", (int)(n > 255 ? 255 : n), k, n);
}

int main(void)
{
	static char line[] = "get foo bar:17 bazbazbaz\r\nset x 0 0 5\r\n";
	long pg = sysconf(_SC_PAGESIZE);
	char big[400], s[300];

	/* keys inside the request line, no NUL after them */
	key(line + 4, 3, 0);
	key(line + 8, 6, 0);
	key(line + 15, 9, 0);
	key(line + 15, 0, 0);
	/* keys of every length the inline writer takes and some it does
	 * not (over its 112 bytes: record()), and over the string limit
	 * (cut to 255 bytes) */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	for (size_t n = 1; n < 120; n += 7)
		key(big + 1, n, 0);
	key(big, 200, 0);
	key(big, 300, 0);
	/* NUL-terminated strings of every length 0..299 */
	for (size_t n = 0; n < sizeof(s); n++) {
		memcpy(s, big + n % 26, n);
		s[n] = 0;
		take_str(s);
		printf("str: s=\"%.255s\"\n", s);
	}
	/* a key ending at a page's last byte, then one running past it */
	char *p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + pg, (size_t)pg, PROT_NONE))
		return 2;
	memset(p + pg - 16, 'z', 16);
	key(p + pg - 5, 5, 0);
	key(p + pg - 5, 6, 1);
	return sink == 0;
}
