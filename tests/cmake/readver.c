#include <stdio.h>

#include <utrace/reader.h>

int main(void)
{
	printf("%s\n", utrace_reader_version());
	return 0;
}
