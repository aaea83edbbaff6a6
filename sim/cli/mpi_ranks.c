/*
 * mpi_ranks.c -- commands as the ranks of an MPI job (mpi_ranks.h). Built with MPI (SIM_HAVE_MPI, CMake option
 * SIM_MPI, on when find_package(MPI) finds it), a process that a launcher started as a rank joins
 * MPI_COMM_WORLD; the commands deal out their work by rank and gather the results on rank 0 with MPI's own
 * collectives (MPI_Allreduce, MPI_Gatherv). A process started without a launcher never calls MPI_Init: it is
 * rank 0 of 1, as in a build without MPI.
 */
#include "mpi_ranks.h"

#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long sim_share(long n, long part, long parts)
{
	return n > part ? (n - part + parts - 1) / parts : 0;
}

int sim_mpi_gather_dealt(const struct sim_mpi *m, const void *mine, long n, size_t size, void *all, const char *cmd)
{
	long N = m->size;
	long *cnt = malloc((size_t)N * sizeof *cnt), *off = malloc((size_t)N * sizeof *off);
	char *cat = m->rank == 0 ? malloc((size_t)(n ? n : 1) * size) : NULL;
	int code = !cnt || !off || (m->rank == 0 && !cat) ? SIM_EXIT_INTERNAL : 0;
	if (code)
		fprintf(stderr, "sim %s: out of memory\n", cmd);
	code = sim_mpi_agree(m, code);
	for (long r = 0, o = 0; !code && r < N; o += cnt[r], r++)
		cnt[r] = sim_share(n, r, N), off[r] = o;
	if (!code)
		code = sim_mpi_gather(m, mine, cnt, size, cat, cmd);
	if (!code && m->rank == 0) /* rank r's j-th record is record r + j N */
		for (long k = 0; k < n; k++)
			memcpy((char *)all + (size_t)k * size, cat + (size_t)(off[k % N] + k / N) * size, size);
	free(cnt);
	free(off);
	free(cat);
	return code;
}

#ifdef SIM_HAVE_MPI
#include <mpi.h>

static int launched(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", NULL};
	for (int i = 0; vars[i]; i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}

int sim_mpi_start(struct sim_mpi *m, const char *cmd)
{
	m->rank = 0, m->size = 1, m->on = 0;
	if (!launched())
		return 0;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
		fprintf(stderr, "sim %s: cannot join the MPI job (MPI_Init failed)\n", cmd);
		return SIM_EXIT_INTERNAL;
	}
	m->on = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m->size);
	return 0;
}

int sim_mpi_agree(const struct sim_mpi *m, int code)
{
	int all = code;
	if (m->size > 1)
		MPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

int sim_mpi_gather(const struct sim_mpi *m, const void *mine, const long *n, size_t size, void *all, const char *cmd)
{
	if (m->size == 1)
		return 0;
	int *counts = malloc((size_t)m->size * sizeof *counts), *displs = malloc((size_t)m->size * sizeof *displs);
	long long off = 0;
	int bad = !counts || !displs;
	for (int r = 0; r < m->size && !bad; r++) {
		long long bytes = (long long)n[r] * (long long)size;
		bad = bytes > INT_MAX || off > INT_MAX;
		counts[r] = (int)bytes, displs[r] = (int)off;
		off += bytes;
	}
	if (bad) { /* every rank sees the same n[]: they all stop here */
		fprintf(stderr, "sim %s: %s\n", cmd,
		        counts && displs ? "more than 2 GiB of results to gather on rank 0: use --shard and sim merge"
		                         : "out of memory");
		free(counts);
		free(displs);
		return SIM_EXIT_INTERNAL;
	}
	int rc = MPI_Gatherv(mine, counts[m->rank], MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
	free(counts);
	free(displs);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "sim %s: gathering the results on rank 0 failed (MPI_Gatherv)\n", cmd);
		return SIM_EXIT_INTERNAL;
	}
	return 0;
}

void sim_mpi_end(struct sim_mpi *m)
{
	if (m->on)
		MPI_Finalize();
	m->on = 0;
}

const char *sim_mpi_version(char *buf, size_t len)
{
#ifdef OMPI_MAJOR_VERSION
	snprintf(buf, len, "MPI %d.%d (Open MPI %d.%d.%d)", MPI_VERSION, MPI_SUBVERSION, OMPI_MAJOR_VERSION,
	         OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#else
	snprintf(buf, len, "MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
#endif
	return buf;
}

#else /* no MPI: one rank */

int sim_mpi_start(struct sim_mpi *m, const char *cmd)
{
	(void)cmd;
	m->rank = 0, m->size = 1, m->on = 0;
	return 0;
}

int sim_mpi_agree(const struct sim_mpi *m, int code)
{
	(void)m;
	return code;
}

int sim_mpi_gather(const struct sim_mpi *m, const void *mine, const long *n, size_t size, void *all, const char *cmd)
{
	(void)m, (void)mine, (void)n, (void)size, (void)all, (void)cmd;
	return 0;
}

void sim_mpi_end(struct sim_mpi *m)
{
	m->on = 0;
}

const char *sim_mpi_version(char *buf, size_t len)
{
	snprintf(buf, len, "no MPI");
	return buf;
}
#endif
