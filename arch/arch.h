/*
 * arch.h -- the hardware model: what sim/ and workloads/ may include.
 *
 * A chip is described by a libconfig file (configs/\*.cfg) and loaded into a
 * struct arch_chip. Every parameter is declared once, in the tables of
 * arch/params.c; those tables drive parsing, defaults, `sim help config` and
 * the error for an unknown key. Peaks, ridge points and link bandwidths are
 * derived here from the microarchitecture (units x MACs x 2 x clock), never
 * read from the config: the `published` figures a config cites are kept only
 * to be printed beside the derived ones.
 *
 * Units on every field: bytes, bytes/s, Hz, seconds, watts, FLOP/s.
 */
#ifndef SIM_ARCH_H
#define SIM_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes shared by every subcommand (BSD sysexits where one fits). */
enum {
	SIM_EXIT_OK = 0,
	SIM_EXIT_USAGE = 2,
	SIM_EXIT_NOFIT = 3,      /* the workload does not fit the device memory */
	SIM_EXIT_TRACE = 65,     /* bad trace (EX_DATAERR) */
	SIM_EXIT_NOINPUT = 66,   /* input file does not exist (EX_NOINPUT) */
	SIM_EXIT_INTERNAL = 70,  /* internal error (EX_SOFTWARE) */
	SIM_EXIT_CANTCREAT = 73, /* cannot write output (EX_CANTCREAT) */
	SIM_EXIT_CONFIG = 78,    /* bad config (EX_CONFIG) */
};

/* Data types of vector lanes and matrix units. */
enum arch_dtype { DT_FP64, DT_FP32, DT_TF32, DT_FP16, DT_BF16, DT_FP8, DT_FP4, DT_INT32, DT_INT8, DT_INT4, DT_COUNT };
const char *arch_dtype_name(enum arch_dtype dt);
int arch_dtype_parse(const char *name); /* -1 if unknown */
int arch_dtype_is_int(enum arch_dtype dt);

#define ARCH_NAME_MAX  64
#define ARCH_TEXT_MAX  512
#define ARCH_MAX_UNITS 4
#define ARCH_MAX_LINKS 8

/* One group of identical compute units: SMs, CUs, AI cores, MXUs, tiles... */
struct arch_unit {
	char name[ARCH_NAME_MAX]; /* group key in the config, e.g. "sm" */
	char kind[ARCH_NAME_MAX]; /* sm|cu|aicore|cube|vector|... */
	long count;               /* units on the chip (all dies) */
	double clock_hz;          /* clock of vector peaks and fp64 matrix */
	double tensor_clock_hz;   /* clock of tf32-and-narrower matrix peaks */
	long warp_size;           /* threads per warp / wavefront */
	long schedulers;          /* warp schedulers per unit */
	long max_warps;           /* resident warps per unit */
	long max_ctas;            /* resident CTAs (blocks) per unit */
	double regfile_bytes;     /* register file per unit */
	double smem_bytes;        /* shared memory / LDS / local buffer per unit */
	double vec[DT_COUNT];     /* FMA results per clock per unit (0 = none) */
	double sfu;               /* special-function results per clock per unit */
	long mat_units;           /* matrix units per compute unit */
	double mat[DT_COUNT];     /* dense MACs per clock per matrix unit */
	double mat_fp16_acc16;    /* fp16 MACs/clk with fp16 accumulate (0 = fp16) */
	double sparsity;          /* 2:4 structured sparsity speed-up (1 = none) */
	double mat_pj;            /* energy of a dense 16-bit MAC with its operand delivery, pJ (0 = no power limit) */
	int mat_async;            /* matrix ops issue asynchronously (Hopper wgmma): softmax overlaps them */
	double mat_sync_frac;  /* share of the matrix rate the synchronous warp-level instruction (mma.sync) reaches */
	double mat_narrow_clk; /* unit cycles per warp-wide global load narrower than 16 B in the library's fallback
	                          GEMM kernel for misaligned leading dimensions (0: no such fallback modelled) */
	/* unit cycles per warp-wide store of C narrower than 16 B in that kernel's epilogue, when C's leading
	   dimension is the misaligned one (0: its stores cost nothing more) */
	double mat_narrow_st_clk;
	double smem_Bpc; /* shared-memory bandwidth, bytes per clock per unit */
	/* issue-to-use latencies of the warp-level stepper (sim/step/step.c), in the unit's cycles */
	double lat_alu;  /* dependent fp32/int lane instruction (FFMA) */
	double lat_sfu;  /* special-function instruction (MUFU.EX2) */
	double lat_smem; /* shared-memory load (LDS, ldmatrix) */
	double lat_mma;  /* matrix instruction beyond its pipe occupancy (fill and drain) */
	double lat_bar;  /* CTA barrier: last arrival to release */
};

/* One memory level: device memory (HBM/GDDR/...) or an on-chip cache/SRAM. */
struct arch_mem {
	int present;
	char type[ARCH_NAME_MAX]; /* HBM3, GDDR6, LPDDR5, SRAM, ... */
	double size_bytes;        /* capacity */
	double bw_Bps;            /* bandwidth (derived from bus if not given) */
	double latency_s;         /* load-to-use latency, 0 = unknown */
	double bus_bits;          /* interface width, 0 = unknown */
	double data_rate_bps;     /* per-pin data rate (bytes/s per pin), 0 = unknown */
	double bytes_per_clk;     /* cache: read bytes per clock, whole chip */
	double clock_hz;          /* cache: its clock, default the first unit group's */
};

/* A family of identical chip-to-chip or host links. */
struct arch_link {
	char name[ARCH_NAME_MAX];    /* group key, e.g. "nvlink" */
	char kind[ARCH_NAME_MAX];    /* nvlink|pcie|hccs|xgmi|... */
	char version[ARCH_NAME_MAX]; /* "4.0", free text */
	long count;                  /* links of this kind per device */
	double bw_Bps;               /* per link, per direction */
	double latency_s;            /* host copy over it (kind pcie), 0 = unknown */
	long pcie_gen;               /* PCIe generation (kind pcie) */
	long pcie_lanes;             /* PCIe lanes (kind pcie) */
};

/* Dies (chiplets) and the die-to-die links between them. */
struct arch_dies {
	long count;                   /* compute dies; units and L2 split evenly */
	long io_count;                /* I/O dies (0 = none) */
	char topology[ARCH_NAME_MAX]; /* pair|ring|mesh|full|via_io */
	double d2d_bw_Bps;            /* per die pair, per direction */
	double d2d_latency_s;         /* extra latency of a crossing */
	char memory[ARCH_NAME_MAX];   /* interleaved (one device, addresses striped over every die's stacks) | local */
	char l2[ARCH_NAME_MAX];       /* shared (dies' L2s coherent, serving each other's misses) | private */
};

/* The node and cluster the device is deployed in. */
struct arch_system {
	int present;
	long devices_per_node;
	char topology[ARCH_NAME_MAX]; /* switch|full_mesh|hybrid_cube_mesh|ring|torus|pcie_host */
	char link[ARCH_NAME_MAX];     /* name of the links.* group used inside a node */
	int in_switch_reduction;      /* NVLS / SHARP capable switch */
	double nvls_eff;              /* the collective library's in-switch reduction efficiency (0: unset) */
	long nvls_channels;           /* the CTAs (channels) it runs an in-switch reduction on (0: unset) */
	long nics_per_device;         /* 0 = no inter-node network */
	double nic_bw_Bps;            /* per NIC, per direction */
	double nic_lat_s;             /* the latency the network plugin reports to the collective library */
	long nodes;                   /* 0 = from the trace's rank count */
	double oversubscription;      /* 1 = non-blocking */
};

/* Figures the vendor published, kept only for comparison with derived ones. */
struct arch_published {
	double mat[DT_COUNT]; /* dense matrix peaks, FLOP/s (OP/s for ints) */
	double vec[DT_COUNT]; /* vector peaks, FLOP/s */
	char source[ARCH_TEXT_MAX];
};

/*
 * Constants of the device model that are not on a datasheet. The validation
 * suite fits them itself, on every op-level row and leaving each source out
 * (docs/validation.md, "Fitted constants", shows the fitted values beside
 * these defaults and how well each fold predicts the rows it left out); a
 * config overrides one only with a cited reason.
 */
struct arch_model {
	double launch_s;         /* what a kernel adds to back-to-back kernels on a stream beyond its work */
	double launch_gap_s;     /* of launch_s, the idle gap before the kernel (the rest is inside its span) */
	double graph_gap_s;      /* that gap for a kernel launched from a CUDA graph (launch=graph) */
	double dram_eff;         /* fraction of peak device-memory bandwidth a stream reaches */
	double write_cost;       /* bandwidth a written byte takes, in read bytes (bus turnaround) */
	double static_power;     /* share of TDP not available to the matrix units (leakage, memory, uncore) */
	double l2_eff;           /* fraction of peak L2 bandwidth a stream reaches */
	double mma_eff;          /* fraction of the matrix units' issue rate a main loop sustains */
	double sync_eff;         /* of mma.sync's peak (matrix.sync_fraction), the share a kernel sustains beside its
	                            other instructions, on units whose native matrix path is asynchronous */
	double loaded_latency;   /* memory latency under full load, as a multiple of the idle one */
	double bytes_per_thread; /* bytes a thread of an elementwise kernel keeps in flight */
	double dram_latency_s;   /* used where memory.device.latency is unset */
	double l2_latency_s;     /* used where memory.l2.latency is unset */
	double link_eff;         /* fraction of an intra-node link's bandwidth collectives and copies reach */
	double nic_eff;          /* fraction of a scale-out NIC's line rate collectives and copies reach */
	double coll_lat_scale;   /* scales the collective latency table */
	double coll_chunk;       /* bytes of a pipelined collective step (chunk x channels) */
};

struct arch_chip {
	char path[ARCH_TEXT_MAX]; /* the file it was loaded from */
	char vendor[ARCH_NAME_MAX];
	char name[ARCH_NAME_MAX];
	char archname[ARCH_NAME_MAX]; /* microarchitecture: Hopper, CDNA 3 ... */
	char process[ARCH_NAME_MAX];
	char form[ARCH_NAME_MAX]; /* SXM, PCIe, OAM ... */
	long year;
	double tdp_w;     /* 0 = unpublished */
	double price_usd; /* 0 = unpublished */
	char notes[ARCH_TEXT_MAX];
	int hypothetical; /* a design, not a product: no inherited published figures, year or price */
	struct arch_dies dies;
	int nunits;
	struct arch_unit units[ARCH_MAX_UNITS];
	struct arch_mem dram; /* device memory */
	struct arch_mem l2;
	struct arch_mem llc; /* Infinity Cache / L3 / large on-chip SRAM: type and size only */
	int nlinks;
	struct arch_link links[ARCH_MAX_LINKS];
	struct arch_system sys;
	struct arch_published pub;
	struct arch_model model;
	int nsets;          /* --set overrides applied */
	char sets[16][160]; /* their text, recorded for reports */
};

/* A load error: where, what, and the exit code it maps to. */
struct arch_error {
	char file[ARCH_TEXT_MAX];
	int line; /* 0 = no line */
	char msg[ARCH_TEXT_MAX];
	int exit_code;
};
/* Prints "file:line: message" (one line) to f. */
void arch_error_print(const struct arch_error *e, FILE *f);

/* "Did you mean": the index of the candidate nearest s by edit distance
   (Levenshtein), when near enough to be a slip (at most 2 edits, or a
   quarter of s), else -1. For presets, options, commands and config names. */
int arch_nearest(const char *s, const char *const *cands, int n);
int arch_edit_distance(const char *a, const char *b);

/*
 * Loads a config and applies `--set path=value` overrides in order.
 * Returns NULL and fills *err on any error. Free with arch_free().
 */
struct arch_chip *arch_load(const char *path, const char *const *sets, int nsets, struct arch_error *err);
/* The same from a string; `inherits` is resolved against basedir. */
struct arch_chip *arch_load_string(const char *text, const char *name, const char *basedir, const char *const *sets,
                                   int nsets, struct arch_error *err);
void arch_free(struct arch_chip *c);

/* Derived figures (arch/derive.c). FLOP/s; 0 where the chip has no unit. */
double arch_peak_matrix(const struct arch_chip *c, enum arch_dtype dt, int sparse);
double arch_peak_vector(const struct arch_chip *c, enum arch_dtype dt);
/* Best of matrix and vector units for a dtype (what a GEMM could reach). */
double arch_peak(const struct arch_chip *c, enum arch_dtype dt);
/* FLOP per byte at which dt's peak meets the bandwidth of a level. */
double arch_ridge(const struct arch_chip *c, enum arch_dtype dt, const struct arch_mem *m);
/* Per-direction bandwidth of a link, derived from PCIe gen x lanes if so. */
double arch_link_bw(const struct arch_link *l);
double arch_pcie_lane_Bps(long gen); /* per lane per direction, 0 if unknown gen */
const struct arch_link *arch_find_link(const struct arch_chip *c, const char *name);
long arch_total_units(const struct arch_chip *c);

/*
 * A hash of the chip's content (arch/fingerprint.c): every resolved parameter,
 * by value, not the path, notes, published figures or --set text. Equal for two
 * loads of the same file; different once a --set changes a value. What the
 * device model's memo keys a chip by.
 */
uint64_t arch_chip_fingerprint(const struct arch_chip *c);

/* Writes the parameter reference (text or Markdown) from the tables. */
void arch_params_help(FILE *f, int markdown);

/* Quantities with units (arch/units.c). */
enum unit_kind {
	UNIT_NONE,      /* plain number */
	UNIT_BYTES,     /* B, KB, MB, GB, TB, PB, KiB ... PiB */
	UNIT_BANDWIDTH, /* B/s, GB/s, TB/s, GiB/s, Gb/s, Gbps, GBps ... */
	UNIT_FREQ,      /* Hz, kHz, MHz, GHz */
	UNIT_TIME,      /* s, ms, us, ns, ps */
	UNIT_POWER,     /* W, kW, mW */
	UNIT_FLOPS,     /* FLOPS, GFLOPS, TFLOPS, PFLOPS, TOPS, POPS, FLOP/s ... */
	UNIT_USD,       /* USD */
	UNIT_KIND_COUNT
};
/*
 * Parses "3.35 TB/s" into 3.35e12 (decimal prefixes are exact powers of ten,
 * binary ones powers of two). Returns 0 on success; on failure returns -1 and
 * writes a one-line reason (what was expected) into why.
 */
int units_parse(const char *text, enum unit_kind kind, double *out, char *why, size_t whylen);
const char *units_kind_name(enum unit_kind kind);
const char *units_example(enum unit_kind kind);
/* The SI symbol of a kind's base unit ("B/s", "Hz"); "" for a plain number. */
const char *units_symbol(enum unit_kind kind);
/* Formats v with the largest fitting prefix: "3.35 TB/s", "50 MiB". */
void units_format(double v, enum unit_kind kind, char *buf, size_t len);

#endif
