/*
 * mpi_ranks.h -- a command run as the ranks of an MPI job (`mpirun -n N sim sweep ...`), when sim was built with
 * MPI (SIM_MPI, Open MPI from Debian: optional) and a launcher started it as one of several ranks. Otherwise one
 * rank (size 1), and every function is a no-op. sim/cli/mpi_ranks.c.
 */
#ifndef SIM_MPI_RANKS_H
#define SIM_MPI_RANKS_H

#include <stddef.h>

struct sim_mpi {
	int rank, size; /* this process's rank and the job's; 0 and 1 without MPI */
	int on;         /* MPI_Init was called (sim_mpi_end finalizes) */
};

/* Joins the MPI job when the environment says a launcher started this process as a rank (OMPI_COMM_WORLD_SIZE,
   PMI_SIZE, PMIX_RANK); else rank 0 of 1. Returns 0, or an exit code with a line on stderr. */
int sim_mpi_start(struct sim_mpi *m, const char *cmd);

/* The largest of every rank's code (so that all ranks exit alike); code itself with one rank. */
int sim_mpi_agree(const struct sim_mpi *m, int code);

/* Rank r's n[r] records of size bytes each (mine, n[m->rank] of them) gathered on rank 0 into all, rank 0's first,
   then rank 1's ...; n[] is known to every rank. Returns 0, or an exit code with a line on stderr. */
int sim_mpi_gather(const struct sim_mpi *m, const void *mine, const long *n, size_t size, void *all, const char *cmd);

/* How many of n records, dealt out round robin, part `part` of `parts` gets: those k < n with k = part mod parts. */
long sim_share(long n, long part, long parts);

/* n records dealt out by rank (record k is rank k mod size's; mine holds its own in order k = rank, rank + size,
   ...) gathered on rank 0 into all[0..n), in record order (all unused on other ranks). Call only with size > 1.
   Returns 0, or an exit code (on every rank) with a line on stderr. */
int sim_mpi_gather_dealt(const struct sim_mpi *m, const void *mine, long n, size_t size, void *all, const char *cmd);

/* Leaves the MPI job (MPI_Finalize) if it was joined. */
void sim_mpi_end(struct sim_mpi *m);

/* "MPI 3.1 (Open MPI 4.1.4)" when this sim was built with MPI, "no MPI" otherwise. */
const char *sim_mpi_version(char *buf, size_t len);

#endif
