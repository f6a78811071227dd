/* wr: exact single-syscall I/O on tracefs-like files, for the ctl conformance suite.
 *
 *   wr [-a|-t] FILE STRING     open O_WRONLY (-a: |O_APPEND, -t: |O_TRUNC), do exactly ONE
 *                              write() of STRING (C escapes \n \t \\ \0 \xHH interpreted) and print
 *                              "write(<n> bytes) = <ret>" or "write(<n> bytes) = -1 <ERRNO> (<strerror>)".
 *                              Exit 0 on success, 1 on write error, 2 on open error.
 *   wr -r [-n] FILE SIZE...    open O_RDONLY (-n: |O_NONBLOCK) and do one read() of each SIZE on the
 *                              same descriptor; print "read(<size>) = <ret> \"<escaped data>\"" or
 *                              "read(<size>) = -1 <ERRNO> (<strerror>)" per read (stops at an error).
 *
 * Shell `echo` retries partial writes and `>` adds O_TRUNC; this helper shows what ONE syscall does.
 * Output format of the write mode matches tools/wr.c of the kernel reference transcripts. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
#define E(x) case x: return #x;
	E(EINVAL) E(ENOENT) E(EBUSY) E(ENOMEM) E(EPERM) E(EEXIST) E(ENODEV) E(E2BIG) E(EFAULT)
	E(ENOSPC) E(EACCES) E(ENOSYS) E(ERANGE) E(ENXIO) E(EIO) E(EAGAIN) E(EBADF) E(EOPNOTSUPP)
	E(ENAMETOOLONG) E(ESRCH) E(EINTR) E(EROFS) E(EISDIR) E(ENOTCONN)
#undef E
	default: return "E?";
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static size_t unescape(const char *s, char *b)
{
	size_t n = 0, L = strlen(s);
	for (size_t k = 0; k < L; k++) {
		if (s[k] == '\\' && k + 1 < L) {
			char d = s[++k];
			if (d == 'n') b[n++] = '\n';
			else if (d == 't') b[n++] = '\t';
			else if (d == '0') b[n++] = 0;
			else if (d == '\\') b[n++] = '\\';
			else if (d == 'x' && k + 2 < L && hexval(s[k + 1]) >= 0 && hexval(s[k + 2]) >= 0) {
				b[n++] = (char)(hexval(s[k + 1]) * 16 + hexval(s[k + 2]));
				k += 2;
			} else { b[n++] = '\\'; b[n++] = d; }
		} else
			b[n++] = s[k];
	}
	return n;
}

static void put_escaped(const char *p, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n') fputs("\\n", stdout);
		else if (c == '\t') fputs("\\t", stdout);
		else if (c == '\\') fputs("\\\\", stdout);
		else if (c == '"') fputs("\\\"", stdout);
		else if (c < 0x20 || c >= 0x7f) printf("\\x%02x", c);
		else putchar(c);
	}
	putchar('"');
}

static int do_read(int argc, char **argv)
{
	int i = 2, fl = O_RDONLY;
	if (i < argc && !strcmp(argv[i], "-n")) { fl |= O_NONBLOCK; i++; }
	if (argc - i < 2) { fprintf(stderr, "usage: wr -r [-n] FILE SIZE...\n"); return 3; }
	int fd = open(argv[i], fl);
	if (fd < 0) {
		printf("open(%s) = -1 %s (%s)\n", argv[i], ename(errno), strerror(errno));
		return 2;
	}
	for (i++; i < argc; i++) {
		size_t sz = strtoul(argv[i], NULL, 10);
		char *buf = malloc(sz ? sz : 1);
		if (!buf) return 3;
		ssize_t r = read(fd, buf, sz);
		if (r < 0) {
			int e = errno;
			printf("read(%zu) = -1 %s (%s)\n", sz, ename(e), strerror(e));
			fflush(stdout);
			free(buf);
			return 1;
		}
		printf("read(%zu) = %zd ", sz, r);
		put_escaped(buf, (size_t)r);
		putchar('\n');
		fflush(stdout);
		free(buf);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int fl = O_WRONLY, i = 1;
	if (argc > 1 && !strcmp(argv[1], "-r"))
		return do_read(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "-a")) { fl |= O_APPEND; i++; }
	else if (argc > 1 && !strcmp(argv[1], "-t")) { fl |= O_TRUNC; i++; }
	if (argc - i != 2) {
		fprintf(stderr, "usage: wr [-a|-t] FILE STRING | wr -r [-n] FILE SIZE...\n");
		return 3;
	}
	int fd = open(argv[i], fl);
	if (fd < 0) {
		printf("open(%s) = -1 %s (%s)\n", argv[i], ename(errno), strerror(errno));
		return 2;
	}
	const char *s = argv[i + 1];
	char *b = malloc(strlen(s) + 1);
	if (!b) return 3;
	size_t n = unescape(s, b);
	ssize_t r = write(fd, b, n);
	if (r < 0) {
		int e = errno;
		printf("write(%zu bytes) = -1 %s (%s)\n", n, ename(e), strerror(e));
		return 1;
	}
	printf("write(%zu bytes) = %zd\n", n, r);
	close(fd);
	return 0;
}
