/*
 * dtcheck: guest/dtortrace.h's rules on a trace read from stdin, the
 * same code the guest's reader applies to trace_pipe, and its KV report
 * (dt_print; the reasons in dtor.bad.N lines). The tests give it traces
 * with a known verdict.
 */
/* the guest's start and report (tracefs, fork) are not used here */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../guest/dtortrace.h"

int main(void)
{
	struct dt_state d = { 0 };
	char line[512];

	d.t = calloc(DT_SLOTS, sizeof(*d.t));
	if (!d.t)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		dt_line(&d, line);
	}
	dt_print(&d, dt_end(&d), "complete");
	return 0;
}
