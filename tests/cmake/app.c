#define CREATE_TRACE_POINTS
#include "app-trace.h"

int main(void)
{
	const char *paths[] = { "/index.html", "/api/items", "/favicon.ico" };

	for (int i = 0; i < 3; i++)
		trace_req_start(i + 1, paths[i]);
	return 0;
}
