/*
 * replay.c -- runs a fuzz target over files (the seed corpus and the inputs
 * that once crashed it), so every kept input is a test in ordinary builds.
 * usage: replay_X FILE_OR_DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			n += run_file(argv[i]) == 0;
			continue;
		}
		DIR *d = opendir(argv[i]);
		for (struct dirent *e; d && (e = readdir(d));) {
			char p[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
			n += run_file(p) == 0;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs: %d passed, 0 failed\n", n, n);
	return n == 0;
}
