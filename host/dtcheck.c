/*
 * dtcheck: guest/dtortrace.h's rules on a trace read from stdin, as the
 * guest's reader applies them to trace_pipe (the same code): the tests
 * give it traces with a known verdict. Prints the KV lines
 * dtor.inits/destroys/late/live_at_end/bad/
 * unparsed/destroys_irqs_off/destroys_noflags; vmrun strips the KFRAG-KV: prefix, the test too (and dtor.bad.N reasons).
 */
#include "../guest/dtortrace.h"

/* the guest's start and report are not used here */
static void unused(void) __attribute__((unused));
static void unused(void)
{
	dtortrace_report(dtortrace_start());
}

int main(void)
{
	struct dt_state d = { 0 };
	char line[512];
	unsigned long long live;

	d.t = calloc(DT_SLOTS, sizeof(*d.t));
	if (!d.t)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		dt_line(&d, line);
	}
	live = dt_end(&d);
	printf("KFRAG-KV: dtor.inits=%llu\nKFRAG-KV: dtor.destroys=%llu\nKFRAG-KV: dtor.late=%llu\n"
	       "KFRAG-KV: dtor.live_at_end=%llu\nKFRAG-KV: dtor.bad=%llu\nKFRAG-KV: dtor.unparsed=%llu\n"
	       "KFRAG-KV: dtor.destroys_irqs_off=%llu\nKFRAG-KV: dtor.destroys_noflags=%llu\n",
	       d.inits, d.destroys, d.late, live, d.bad, d.unparsed, d.destroys_irqs_off,
	       d.destroys_noflags);
	return 0;
}
