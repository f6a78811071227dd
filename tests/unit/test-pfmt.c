/* SPDX-License-Identifier: MIT */
/*
 * The kernel's %p extensions in the traced program's own printer
 * (UTRACE_PRINT, utrace_seq_printf()): each output is the one
 * Documentation/core-api/printk-formats.rst and lib/vsprintf.c give.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utrace/tracepoint.h>

#include "test.h"

static char out[512];

/* Through a pointer without the printf attribute: some of these are what
 * -Wformat calls wrong, as it does for kernel code. */
static void (*const seq_printf)(struct utrace_seq *, const char *, ...) = utrace_seq_printf;

#define P(...)								\
	__extension__({							\
		struct utrace_seq s_;					\
		utrace_seq_init(&s_, out, sizeof(out));			\
		seq_printf(&s_, __VA_ARGS__);				\
		out;							\
	})

TEST(plain_conversions_as_glibc)
{
	CHECK_STR(P("%d|%5.2f|%*d|%-4s|%lld|%zu|%%|%c|%.*s|%#x|%hhu", -3, 3.14159, 4, 7, "ab",
		    -5LL, (size_t)9, 'z', 2, "xyz", 255, 257),
		  "-3| 3.14|   7|ab  |-5|9|%|z|xy|0xff|1");
	CHECK_STR(P("%p %p", (void *)0x1234, NULL), "0x1234 (nil)");
	CHECK_STR(P("no conversion"), "no conversion");
	CHECK_STR(P("%n|%d", (int *)NULL, 5), "|5");
}

TEST(ip4)
{
	unsigned char a[4] = { 1, 2, 3, 4 };

	CHECK_STR(P("%pI4", a), "1.2.3.4");
	CHECK_STR(P("%pi4", a), "001.002.003.004");
	CHECK_STR(P("%pI4h", a), "4.3.2.1");
	CHECK_STR(P("%pI4n", a), "1.2.3.4");
	CHECK_STR(P("[%-10pI4]", a), "[1.2.3.4   ]");
	CHECK_STR(P("[%10pI4]", a), "[   1.2.3.4]");
}

TEST(ip6)
{
	struct in6_addr a, m;

	inet_pton(AF_INET6, "2001:db8::1", &a);
	inet_pton(AF_INET6, "::ffff:1.2.3.4", &m);
	CHECK_STR(P("%pI6", &a), "2001:0db8:0000:0000:0000:0000:0000:0001");
	CHECK_STR(P("%pi6", &a), "20010db8000000000000000000000001");
	CHECK_STR(P("%pI6c", &a), "2001:db8::1");
	CHECK_STR(P("%pI6c", &m), "::ffff:1.2.3.4");
	inet_pton(AF_INET6, "1:0:0:2:0:0:0:3", &a);
	CHECK_STR(P("%pI6c", &a), "1:0:0:2::3");
	inet_pton(AF_INET6, "1:2:3:4:5:6:0:8", &a);
	CHECK_STR(P("%pI6c", &a), "1:2:3:4:5:6:0:8");
	inet_pton(AF_INET6, "::", &a);
	CHECK_STR(P("%pI6c", &a), "::");
}

TEST(sockaddr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(443),
				     .sin6_scope_id = 3, .sin6_flowinfo = htonl(0x12345) };
	struct sockaddr bad = { .sa_family = AF_UNIX };

	inet_pton(AF_INET, "10.0.0.1", &sin.sin_addr);
	inet_pton(AF_INET6, "fe80::1", &sin6.sin6_addr);
	CHECK_STR(P("%pISpc", &sin), "10.0.0.1:80");
	CHECK_STR(P("%pIS", &sin), "10.0.0.1");
	CHECK_STR(P("%piS", &sin), "010.000.000.001");
	CHECK_STR(P("%pISpc", &sin6), "[fe80::1]:443");
	CHECK_STR(P("%pISc", &sin6), "fe80::1");
	CHECK_STR(P("%pIS", &sin6), "fe80:0000:0000:0000:0000:0000:0000:0001");
	CHECK_STR(P("%pISpfsc", &sin6), "[fe80::1]:443/74565%3");
	CHECK_STR(P("%pISpc", &bad), "(invalid address)");
}

TEST(mac)
{
	unsigned char m[6] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0xab };

	CHECK_STR(P("%pM", m), "00:01:02:03:04:ab");
	CHECK_STR(P("%pMR", m), "ab:04:03:02:01:00");
	CHECK_STR(P("%pMF", m), "00-01-02-03-04-ab");
	CHECK_STR(P("%pm", m), "0001020304ab");
	CHECK_STR(P("%pmR", m), "ab0403020100");
}

TEST(uuid)
{
	unsigned char u[16];
	int i;

	for (i = 0; i < 16; i++)
		u[i] = (unsigned char)i;
	CHECK_STR(P("%pU", u), "00010203-0405-0607-0809-0a0b0c0d0e0f");
	CHECK_STR(P("%pUb", u), "00010203-0405-0607-0809-0a0b0c0d0e0f");
	CHECK_STR(P("%pUB", u), "00010203-0405-0607-0809-0A0B0C0D0E0F");
	CHECK_STR(P("%pUl", u), "03020100-0504-0706-0809-0a0b0c0d0e0f");
	CHECK_STR(P("%pUL", u), "03020100-0504-0706-0809-0A0B0C0D0E0F");
}

TEST(hex_buffers)
{
	unsigned char b[5] = { 0x00, 0x01, 0x02, 0x03, 0xfe };

	CHECK_STR(P("%*ph", 5, b), "00 01 02 03 fe");
	CHECK_STR(P("%*phC", 5, b), "00:01:02:03:fe");
	CHECK_STR(P("%*phD", 5, b), "00-01-02-03-fe");
	CHECK_STR(P("%*phN", 5, b), "00010203fe");
	CHECK_STR(P("%ph", b), "00");
	CHECK_STR(P("[%*ph]", 0, NULL), "[]");
	CHECK_STR(P("%3ph", b), "00 01 02");
}

TEST(bitmaps)
{
	unsigned long m[2] = { 0x300000000fUL, 0x1UL };

	CHECK_STR(P("%*pb", 40, m), "30,0000000f");
	CHECK_STR(P("%*pbl", 40, m), "0-3,36-37");
	CHECK_STR(P("%*pbl", 65, m), "0-3,36-37,64");
	CHECK_STR(P("%*pb", 65, m), "1,00000030,0000000f");
	CHECK_STR(P("%*pb", 4, m), "f");
	CHECK_STR(P("[%*pbl]", 0, m), "[]");
	m[0] = 3;
	CHECK_STR(P("%*pbl", 2, m), "0-1");
	CHECK_STR(P("%*pbl", 64, m), "0-1");
	m[0] = 0;
	CHECK_STR(P("[%*pbl]", 64, m), "[]");
	CHECK_STR(P("%*pb", 64, m), "00000000,00000000");
}

TEST(escapes)
{
	const char s[4] = { 'a', '\n', 'b', 1 };

	CHECK_STR(P("%*pE", 4, s), "a\\nb\\001");
	CHECK_STR(P("%*pEh", 4, s), "\\x61\\x0a\\x62\\x01");
	CHECK_STR(P("%*pEs", 4, s), "a\\nb\x01");
}

static __attribute__((noinline)) int local_function(int x)
{
	return x * 3 + 1;
}

TEST(symbols)
{
	char want[64];
	const char *got;

	CHECK_STR(P("%ps", (void *)local_function), "local_function");
	CHECK_STR(P("%pf", (void *)local_function), "local_function");
	got = P("%pS", (void *)((char *)local_function + 4));
	CHECK(!strncmp(got, "local_function+0x4/0x", 21));
	got = P("%pF", (void *)local_function);
	CHECK(!strncmp(got, "local_function+0x0/0x", 21));
	/* %pB names the function a return address is in: the one before */
	got = P("%pB", (void *)((char *)local_function + 4));
	CHECK(!strncmp(got, "local_function+0x4/0x", 21));
	/* a library's exported function, by its plainest alias */
	got = P("%pS", (void *)getpid);
	CHECK(!strncmp(got, "getpid+0x0/0x", 13));
	CHECK_STR(P("%pS", (void *)0x1234), "0x1234");
	CHECK_STR(P("%ps", NULL), "0x0");
	snprintf(want, sizeof(want), "[%-16s]", "local_function");
	CHECK_STR(P("[%-16ps]", (void *)local_function), want);
	CHECK_INT(local_function(1), ==, 4);
}

TEST(bad_pointers_never_fault)
{
	void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(hole != MAP_FAILED);
	CHECK_STR(P("%pI4", NULL), "(null)");
	CHECK_STR(P("%pM", (void *)16), "(efault)");
	CHECK_STR(P("%pU", (void *)-2L), "(efault)");
	CHECK_STR(P("%pI6c", hole), "(efault)");
	/* the kernel pads its error text to the field width, whatever the
	 * width means for the conversion */
	CHECK_STR(P("%*pbl", 10, hole), "  (efault)");
	CHECK_STR(P("%*ph", 4, hole), "(efault)");
	CHECK_STR(P("%*pbl", -10, NULL), "(null)    ");
	CHECK_INT(strlen(P("%*pbl", 1 << 30, hole)), ==, sizeof(out) - 1);
	CHECK_STR(P("%pISpc", hole), "(efault)");
	munmap(hole, 4096);
}

TEST(kernel_pointer_rules)
{
	/* letters after %p belong to it: unknown ones print the pointer */
	CHECK_STR(P("%pQx|", (void *)0x1234), "0x1234|");
	CHECK_STR(P("%pI5.", (void *)0x1234), "0x1234.");
	CHECK_STR(P("%px", (void *)0x1234), "0000000000001234");
	CHECK_STR(P("%pK", (void *)0x1234), "0x1234");
	CHECK_STR(P("%pI4:%d", (unsigned char[4]){ 9, 8, 7, 6 }, 22), "9.8.7.6:22");
}

TEST(cut_at_the_end)
{
	char small[12];
	struct utrace_seq s;
	unsigned char u[16] = { 0 };

	utrace_seq_init(&s, small, sizeof(small));
	seq_printf(&s, "%pU", u);
	CHECK_INT(strlen(small), <, sizeof(small));
	CHECK(!strncmp(small, "00000000-00", strlen(small)));
}

TEST_MAIN()
