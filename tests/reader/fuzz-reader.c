/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: any bytes as a trace file, read by the reader library
 * and printed by its printer, that of 'utrace script' (to /dev/null), in
 * one of its three output forms, chosen by the input's size.
 * It must never crash, leak or read outside the input; see README.md for
 * running it.  Built with -DFUZZ_REPLAY it is a plain program that runs
 * the same code once over each file named (or each file of each directory
 * named): the test suite replays the corpus that way with gcc and clang.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file-reader.h"
#include "formats.h"
#include "print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__has_include)
#if __has_include(<sanitizer/common_interface_defs.h>) && !defined(FUZZ_REPLAY)
#include <sanitizer/common_interface_defs.h>
#define HAVE_DEATH_CALLBACK 1
#endif
#endif

/* Verdicts of the parse-in-a-child check, by text: 0 or -1, 1 unknown. */
#define VERDICTS 65536
static struct { uint64_t h; int v; } verdicts[VERDICTS];

static uint64_t text_hash(const char *text, const char *sys)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 0x100000001b3ULL;
	for (h ^= 0xff; *sys; sys++)
		h = (h ^ (unsigned char)*sys) * 0x100000001b3ULL;
	return h | 1;
}

static int verdict_get(const char *text, const char *sys)
{
	uint64_t h = text_hash(text, sys);

	return verdicts[h % VERDICTS].h == h ? verdicts[h % VERDICTS].v : 1;
}

static void verdict_put(const char *text, const char *sys, int v)
{
	uint64_t h = text_hash(text, sys);

	verdicts[h % VERDICTS].h = h;
	verdicts[h % VERDICTS].v = v;
}

#ifdef HAVE_DEATH_CALLBACK
static void child_death(void)
{
	_exit(1);
}

/* A format that kills libtraceevent's parser kills the child that
 * 'utrace script' parses it in first: that is not a crash of ours, and
 * libFuzzer must not write it down as one. */
static void quiet_child(void)
{
	__sanitizer_set_death_callback(child_death);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	static const enum utrace__out_mode modes[] = {
		UTRACE__OUT_TEXT, UTRACE__OUT_FIELDS, UTRACE__OUT_JSON,
	};
	struct utrace__print_opts o = { .input = "fuzz.dat", .mode = modes[size % 3] };
	struct utrace__tf *tf;

	if (!null) {
		null = fopen("/dev/null", "w");
		utrace__parse_verdict_get = verdict_get;
		utrace__parse_verdict_put = verdict_put;
#ifdef HAVE_DEATH_CALLBACK
		utrace__parse_child_hook = quiet_child;
#endif
	}
	utrace__tf_open_mem(data, size, "fuzz.dat", &tf);
	if (tf)
		utrace__print_file(&o, tf, null);
	utrace__tf_close(tf);
	return 0;
}

#ifdef FUZZ_REPLAY
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	for (;;) {
		if (n == cap) {
			unsigned char *b = realloc(buf, cap ? cap * 2 : 65536);

			if (!b) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = b;
			cap = cap ? cap * 2 : 65536;
		}
		size_t r = fread(buf + n, 1, cap - n, f);

		if (!r)
			break;
		n += r;
	}
	fclose(f);
	/* an exact-size copy, so that ASan sees any read past the input;
	 * each file in the three output forms */
	for (size_t pad = 0; pad < 3; pad++) {
		unsigned char *exact = malloc(n + pad ? n + pad : 1);

		if (!exact) {
			free(buf);
			return 1;
		}
		memcpy(exact, buf, n);
		memset(exact + n, 0, pad);
		LLVMFuzzerTestOneInput(exact, n + pad);
		free(exact);
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, files = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;

		if (!d) {
			bad |= replay_file(argv[i]);
			files++;
			continue;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			bad |= replay_file(path);
			files++;
		}
		closedir(d);
	}
	printf("replayed %d files\n", files);
	return bad;
}
#endif
