/*
 * fuzz_file.h -- for the fuzz targets whose parser reads a file by path:
 * the input written whole to a new temporary file.
 */
#ifndef SIM_FUZZ_FILE_H
#define SIM_FUZZ_FILE_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* path: a mkstemp template ("/tmp/NAME.XXXXXX"), the file's name on return. 0, or -1 (nothing left behind). */
static inline int fuzz_write_file(char *path, const uint8_t *data, size_t size)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	if (!ok)
		unlink(path);
	return ok ? 0 : -1;
}

#endif
