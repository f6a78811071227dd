#!/usr/bin/env bash
# many-events-gen.sh N K DIR: K translation units DIR/many-K.c, each with
# N events of its own system "manyK" (one class, DEFINE_EVENT ev0..evN-1),
# and DIR/many-main.c, whose main fires manyK:mK_ev0 and manyK:mK_ev<N-1>
# of the first UNITS units (-DUNITS=, default K) every 10 ms for SECONDS
# (its argument; 0: once; each round prints its number).  Linked together they make one object of
# N*UNITS events (t3100).
set -eu
n=$1 k=$2 d=$3
for ((u = 0; u < k; u++)); do
	{
		echo "#undef TRACE_SYSTEM"
		echo "#define TRACE_SYSTEM many$u"
		echo "#if !defined(_TRACE_MANY${u}_H) || defined(TRACE_HEADER_MULTI_READ)"
		echo "#define _TRACE_MANY${u}_H"
		echo "#include <linux/tracepoint.h>"
		echo "DECLARE_EVENT_CLASS(many${u}_class, TP_PROTO(int v), TP_ARGS(v),"
		echo "	TP_STRUCT__entry(__field(int, v)), TP_fast_assign(__entry->v = v;),"
		echo "	TP_printk(\"v=%d\", __entry->v));"
		for ((i = 0; i < n; i++)); do
			echo "DEFINE_EVENT(many${u}_class, m${u}_ev$i, TP_PROTO(int v), TP_ARGS(v));"
		done
		echo "#endif"
		echo "#undef TRACE_INCLUDE_PATH"
		echo "#define TRACE_INCLUDE_PATH ."
		echo "#undef TRACE_INCLUDE_FILE"
		echo "#define TRACE_INCLUDE_FILE many-$u"
		echo "#include <trace/define_trace.h>"
	} > "$d/many-$u.h"
	{
		echo "#define CREATE_TRACE_POINTS"
		echo "#include \"many-$u.h\""
		echo "void many_fire$u(int v);"
		echo "void many_fire$u(int v) { trace_m${u}_ev0(v); trace_m${u}_ev$((n - 1))(v); }"
	} > "$d/many-$u.c"
done
{
	echo "#include <stdio.h>"
	echo "#include <stdlib.h>"
	echo "#include <unistd.h>"
	echo "#ifndef UNITS"
	echo "#define UNITS $k"
	echo "#endif"
	for ((u = 0; u < k; u++)); do echo "void many_fire$u(int v);"; done
	echo "int main(int argc, char **argv)"
	echo "{"
	echo "	int t = argc > 1 ? atoi(argv[1]) * 100 : 0;"
	echo "	for (int i = 0; i <= t; i++) {"
	for ((u = 0; u < k; u++)); do
		echo "#if UNITS > $u"
		echo "		many_fire$u(i);"
		echo "#endif"
	done
	echo "		if (t)"
	echo "			printf(\"%d\\n\", i), fflush(stdout), usleep(10000);"
	echo "	}"
	echo "	return 0;"
	echo "}"
} > "$d/many-main.c"
