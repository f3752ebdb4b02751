/*
 * disk-oracle MANIFEST EXPORT_DIR: the on-disk oracle of the red test.
 *
 * MANIFEST holds the guest's "KFRAG-MANIFEST: file=F units=U gens=G,G,..."
 * lines and its "KFRAG-KV: writers_started=N" line (guest/redtest.c; other
 * lines are ignored, so the guest's whole report will do). There must be one
 * manifest line for each of files 0..N-1, no more: a writer's line lost
 * (a truncated report, a guest that died while writing it) would leave
 * its file unjudged behind a "corrupted=0". For every unit of every file,
 * EXPORT_DIR/wFFF.dat must hold an
 * intact stamp (common/stamp.h) of that file and unit, of generation G —
 * the last one whose write() returned — or G+1 when the manifest says "G+"
 * (a write of G+1 was still in flight when the run ended). G = 0: never
 * written, the unit must still be a hole (zeros, or past the end of file).
 *
 * Prints writers=, files=, units=, corrupted= and up to 20 detail= lines.
 * Exit 0 checked; 1 no manifest / no writers_started line / a writer's
 * manifest line missing, doubled or of no writer / a file missing or short
 * (never a silent "0 corrupted"); 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stamp.h"

static char line[1 << 20];

/*
 * The manifest's shape, before any block is judged: how many writers the
 * guest started, and one well-formed line for each of their files, no
 * other. Returns 0, or 1 with the error said.
 */
static int manifest_complete(FILE *m, const char *name)
{
	unsigned writers = 0, *seen = NULL, file, n, w;
	unsigned long files = 0, i;
	int have_writers = 0;

	while (fgets(line, sizeof(line), m)) {
		char *p = strstr(line, "KFRAG-MANIFEST: ");
		char *k = strstr(line, "KFRAG-KV: writers_started=");

		if (k) {
			if (sscanf(k, "KFRAG-KV: writers_started=%u", &writers) != 1) {
				fprintf(stderr, "error: malformed writers_started line in %s: %.80s\n", name, k);
				return 1;
			}
			have_writers = 1;
		}
		if (!p)
			continue;
		if (sscanf(p, "KFRAG-MANIFEST: file=%u units=%u", &file, &n) != 2 || !strstr(p, "gens=")) {
			fprintf(stderr, "error: malformed manifest line in %s: %.80s\n", name, p);
			return 1;
		}
		for (i = 0; i < files; i++)
			if (seen[i] == file) {
				fprintf(stderr, "error: file %u has two KFRAG-MANIFEST lines in %s: "
					"which one to judge by?\n", file, name);
				return 1;
			}
		seen = realloc(seen, (files + 1) * sizeof(*seen));
		if (!seen) {
			fprintf(stderr, "error: out of memory\n");
			return 1;
		}
		seen[files++] = file;
	}
	if (!files) {
		fprintf(stderr, "error: no KFRAG-MANIFEST line in %s: the guest workload did not finish, "
			"so the disk cannot be judged\n  fix: look for its error in the report (its KFRAG-KV lines) and the serial log\n", name);
		return 1;
	}
	if (!have_writers) {
		fprintf(stderr, "error: no 'KFRAG-KV: writers_started=' line in %s: how many writers' "
			"files the manifest must name is unknown, so a lost line would go unseen\n"
			"  fix: a guest workload from before writers_started=? rebuild the initramfs "
			"(make initramfs)\n", name);
		return 1;
	}
	for (i = 0; i < files; i++)
		if (seen[i] >= writers) {
			fprintf(stderr, "error: file %u is not one of the %u writers' in %s (their "
				"files are 0..%u)\n", seen[i], writers, name, writers ? writers - 1 : 0);
			return 1;
		}
	/* each line a file of 0..writers-1, none twice: fewer lines, some missing */
	for (w = 0; files < writers && w < writers; w++) {
		for (i = 0; i < files && seen[i] != w; i++)
			;
		if (i < files)
			continue;
		fprintf(stderr, "error: the manifest has %lu of %u writers' files: file %u has no "
			"KFRAG-MANIFEST line in %s (lost from the report, or the guest died "
			"writing it), so its disk blocks cannot be judged\n"
			"  fix: look at the end of the report and of the serial log\n", files, writers, w, name);
		return 1;
	}
	free(seen);
	printf("writers=%u\n", writers);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char unit[KFRAG_UNIT];
	unsigned long files = 0, units = 0, corrupted = 0, details = 0;
	FILE *m;

	if (argc != 3) {
		fprintf(stderr, "usage: disk-oracle MANIFEST EXPORT_DIR\n");
		return 2;
	}
	m = fopen(argv[1], "r");
	if (!m) {
		fprintf(stderr, "error: cannot read the manifest %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (manifest_complete(m, argv[1]))
		return 1;
	rewind(m);
	while (fgets(line, sizeof(line), m)) {
		char *p = strstr(line, "KFRAG-MANIFEST: "), *g, path[4096];
		unsigned file, n, u;
		FILE *f;

		if (!p)
			continue;
		/* well-formed: manifest_complete() read it */
		sscanf(p, "KFRAG-MANIFEST: file=%u units=%u", &file, &n);
		g = strstr(p, "gens=") + 5;
		snprintf(path, sizeof(path), "%s/w%03u.dat", argv[2], file);
		f = fopen(path, "rb");
		if (!f && errno == ENOENT)
			f = fopen("/dev/null", "rb"); /* never created: all holes, fine if never written */
		if (!f) {
			fprintf(stderr, "error: %s: %s (the manifest names file %u)\n", path,
				strerror(errno), file);
			return 1;
		}
		files++;
		for (u = 0; u < n; u++) {
			char *end;
			unsigned long want = strtoul(g, &end, 10);
			int plus = *end == '+';
			uint64_t gen = 0;
			enum kfrag_verdict v;

			if (end == g) {
				fprintf(stderr, "error: manifest for file %u ends at unit %u of %u\n", file, u, n);
				return 1;
			}
			g = end + plus + (end[plus] == ',');
			/* past the end of the file reads as a hole: zeros */
			memset(unit, 0, sizeof(unit));
			if (fread(unit, 1, sizeof(unit), f) != sizeof(unit) && want) {
				fprintf(stderr, "error: %s is shorter than %u units (unit %u, generation %lu, "
					"missing)\n", path, n, u, want);
				return 1;
			}
			units++;
			v = kfrag_check_unit(unit, file, u, &gen);
			if (v == KFRAG_OK && (gen == want || (plus && gen == want + 1)))
				continue;
			if (!want && v == KFRAG_BAD_STAMP && !memcmp(unit, unit + 1, sizeof(unit) - 1) &&
			    !unit[0])
				continue; /* never written, still a hole */
			corrupted++;
			if (details++ < 20) {
				if (v == KFRAG_OK)
					printf("detail=file %u unit %u: generation %" PRIu64 " on disk, %lu%s "
					       "returned last\n", file, u, gen, want, plus ? "(+1 in flight)" : "");
				else
					printf("detail=file %u unit %u: %s (expected generation %lu)\n", file, u,
					       kfrag_verdict_name(v), want);
			}
		}
		fclose(f);
	}
	fclose(m);
	printf("files=%lu\nunits=%lu\ncorrupted=%lu\n", files, units, corrupted);
	return 0;
}
