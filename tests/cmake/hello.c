#define CREATE_TRACE_POINTS
#include "hello-trace.h"

int main(void)
{
	for (int i = 1; i <= 3; i++)
		trace_hello_world(i);
	return 0;
}
