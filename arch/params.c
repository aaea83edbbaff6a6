/*
 * params.c -- every config parameter, declared once.
 *
 * These tables drive the binding of a config to struct arch_chip (bind.c),
 * the defaults, `sim help config`, docs/config-reference.md and the error for
 * an unknown key. To add a parameter: add a field to arch.h and a row here,
 * with the model that reads it (the last field, shown as "read by"; the
 * loader test fails on an empty one).
 *
 * The rule: every key is read by a model (the device model, the warp stepper,
 * the cluster platform and collectives, the cost of `sim compare`) or is a
 * label that only `sim info` prints (names, the published figures); a
 * quantity that no model reads is not a key. A user who sets a key changes a
 * prediction, or the label.
 */
#include "arch_int.h"

#include <string.h>

#define F(st, fld) offsetof(struct st, fld), sizeof(((struct st *)0)->fld)

/* clang-format off */
#define INT(k, st, fld, fl, def, lo, hi, d, r)   {k, P_INT, UNIT_NONE, fl, def, lo, hi, NULL, F(st, fld), d, r}
#define FLT(k, st, fld, fl, def, lo, hi, d, r)   {k, P_FLOAT, UNIT_NONE, fl, def, lo, hi, NULL, F(st, fld), d, r}
#define BOOL(k, st, fld, def, d, r)              {k, P_BOOL, UNIT_NONE, 0, def, 0, 1, NULL, F(st, fld), d, r}
#define STR(k, st, fld, fl, d, r)                {k, P_STR, UNIT_NONE, fl, NULL, 0, 0, NULL, F(st, fld), d, r}
#define ENUM(k, st, fld, fl, def, ch, d, r)      {k, P_ENUM, UNIT_NONE, fl, def, 0, 0, ch, F(st, fld), d, r}
#define QTY(k, u, st, fld, fl, def, lo, hi, d, r) {k, P_QTY, u, fl, def, lo, hi, NULL, F(st, fld), d, r}

/* Who reads a parameter (the last field of every row; `sim help config` shows it). */
#define R_LABEL     "`sim info` only: a label, no model reads it"
#define R_PUB       "`sim info` only: printed beside the derived figure, no model reads it"
#define R_PEAK      "derived peaks (arch/derive.c), so the device model (sim/device)"
#define R_PEAK_STEP "derived peaks (arch/derive.c), the device model (sim/device) and the warp stepper (sim/step)"
#define R_DEV       "device model (sim/device)"
#define R_DEV_STEP  "device model (sim/device) and warp stepper (sim/step)"
#define R_STEP      "warp stepper (sim/step)"
#define R_DERIVE_BW "the bandwidth where it is unset (arch/derive.c)"
#define R_LINK_BW   "cluster platform: link bandwidth (sim/cluster/platform.c); device model: host copies (sim/device/model.c)"
#define R_PLAT      "cluster platform (sim/cluster/platform.c)"

#define REQ PF_REQUIRED
#define ANY 1e30

static const struct arch_param chip_params[] = {
	STR("vendor", arch_chip, vendor, REQ, "vendor, e.g. \"NVIDIA\"", R_LABEL),
	STR("name", arch_chip, name, REQ, "product name, e.g. \"H100 SXM5 80GB\"",
	    "reports and `sim info` (the chip's name)"),
	STR("arch", arch_chip, archname, 0, "microarchitecture, e.g. \"Hopper\"", R_LABEL),
	STR("process", arch_chip, process, 0, "process node, e.g. \"TSMC 4N\"", R_LABEL),
	STR("form", arch_chip, form, 0, "form factor: SXM, PCIe, OAM, ...", R_LABEL),
	INT("year", arch_chip, year, 0, NULL, 1990, 2100, "year of launch", R_LABEL),
	QTY("tdp", UNIT_POWER, arch_chip, tdp_w, 0, NULL, 0, 1e5, "board power (TDP); absent = unpublished",
	    "device model: power limit (sim/device/model_gemm.c); `sim compare`: energy cost (sim/cli/cmd_compare.c)"),
	QTY("price", UNIT_USD, arch_chip, price_usd, 0, NULL, 0, 1e8, "list price; absent = unpublished",
	    "`sim compare`: cost per hour (sim/cli/cmd_compare.c, sim/report/cost.c)"),
	STR("notes", arch_chip, notes, 0, "what is unpublished and the assumption made instead", R_LABEL),
	BOOL("hypothetical", arch_chip, hypothetical, "false",
	     "a design, not a product: the published figures, year and price of the config it inherits are not its "
	     "own (dropped; it has those its own file states), and reports say so",
	     "`sim info` and `sim compare`: the design is compared with no datasheet"),
};

static const struct arch_param dies_params[] = {
	INT("count", arch_dies, count, 0, "1", 1, 64, "compute dies (chiplets); compute units and L2 split evenly",
	    "device model: die crossings (sim/device/model.c)"),
	INT("io_count", arch_dies, io_count, 0, "0", 0, 64, "I/O dies the compute dies sit on (MI300X: 4)",
	    "device model: die crossings with topology via_io (sim/device/model.c)"),
	ENUM("topology", arch_dies, topology, 0, "pair", "pair|ring|mesh|full|via_io",
	     "how dies connect: pair (2 dies), ring, mesh, full, via_io (through I/O dies)",
	     "device model: hops of a die crossing (sim/device/model.c)"),
	QTY("d2d_bandwidth", UNIT_BANDWIDTH, arch_dies, d2d_bw_Bps, 0, NULL, 0, ANY,
	    "die-to-die bandwidth between two neighbouring dies, per direction",
	    "device model: bandwidth of die crossings (sim/device/model.c)"),
	QTY("d2d_latency", UNIT_TIME, arch_dies, d2d_latency_s, 0, NULL, 0, 1e-3,
	    "extra latency of an access that crosses a die boundary",
	    "device model: memory latency of a crossing (sim/device/model.c, model_gemm.c)"),
	ENUM("memory", arch_dies, memory, 0, "interleaved", "interleaved|local",
	     "interleaved: one device, addresses striped over every die's memory stacks, so (n-1)/n of the bytes "
	     "cross; local: each die works on data in its own stacks (dies that software sees as separate "
	     "devices, MI250X's GCDs), nothing crosses", "device model: whether bytes cross dies (sim/device/model.c)"),
	ENUM("l2", arch_dies, l2, 0, "shared", "shared|private",
	     "shared: the dies' L2 slices are kept coherent and serve each other's misses over the die-to-die "
	     "links (B200, one GPU); private: a die's L2 serves only its own compute units (MI300X XCDs)",
	     "device model: L2 reuse across dies (sim/device/model.c)"),
};

#define VEC(dt, name) FLT("vector." name, arch_unit, vec[dt], 0, NULL, 0, 1e6, \
	"vector " name " FMA results per clock per unit (fp32 lanes: 128 on H100)", R_PEAK_STEP)
#define MAT(dt, name) FLT("matrix." name, arch_unit, mat[dt], 0, NULL, 0, 1e7, \
	"dense " name " MACs per clock per matrix unit", R_PEAK)

static const struct arch_param unit_params[] = {
	ENUM("kind", arch_unit, kind, REQ, NULL,
	     "sm|cu|aicore|cube|vector|mlu_core|tensorcore|tile|tpc|mme|pe|core|spc|xe_core",
	     "what a unit is: NVIDIA SM, AMD CU, Ascend AI core, TPU TensorCore, IPU tile ...", R_LABEL),
	INT("count", arch_unit, count, REQ, NULL, 1, 1e6, "units on the chip (all dies)", R_PEAK_STEP),
	QTY("clock", UNIT_FREQ, arch_unit, clock_hz, REQ, NULL, 1e6, 1e10,
	    "clock of vector peaks and fp64 matrix peaks (boost clock); the top of the clock range, where a GEMM's "
	    "power limit starts from", R_PEAK_STEP),
	QTY("tensor_clock", UNIT_FREQ, arch_unit, tensor_clock_hz, 0, NULL, 1e6, 1e10,
	    "clock of tf32-and-narrower matrix peaks where the vendor uses a lower one (H100: 1830 MHz); default: clock. "
	    "Only the peaks: a GEMM runs at clock less what its power limit takes",
	    R_PEAK),
	INT("warp_size", arch_unit, warp_size, 0, "32", 1, 1024, "threads per warp (NVIDIA 32) or wavefront (AMD 64)",
	    R_DEV_STEP),
	INT("schedulers", arch_unit, schedulers, 0, "4", 1, 64, "warp schedulers (issue slots) per unit", R_DEV_STEP),
	INT("max_warps", arch_unit, max_warps, 0, "64", 1, 4096, "resident warps per unit", R_DEV_STEP),
	INT("max_ctas", arch_unit, max_ctas, 0, "32", 1, 1024, "resident CTAs (thread blocks) per unit",
	    "device model: occupancy (sim/device/model_gemm.c, model_attn.c, model_flash.c, model_stream.c)"),
	QTY("registers", UNIT_BYTES, arch_unit, regfile_bytes, 0, NULL, 0, 1e9, "register file per unit",
	    "device model: occupancy (sim/device/model_gemm.c, model_attn.c, model_flash.c)"),
	QTY("shared_mem", UNIT_BYTES, arch_unit, smem_bytes, 0, NULL, 0, 1e9,
	    "shared memory / LDS / local buffer usable per unit",
	    "device model: tile sizes and occupancy (sim/device/model_gemm.c, model_attn.c, model_flash.c)"),
	VEC(DT_FP64, "fp64"), VEC(DT_FP32, "fp32"), VEC(DT_FP16, "fp16"), VEC(DT_BF16, "bf16"),
	VEC(DT_INT32, "int32"),
	FLT("vector.int8", arch_unit, vec[DT_INT8], 0, NULL, 0, 1e6, "vector int8 dot-product MACs per clock per unit (dp4a: 4 x int32 lanes)",
	    R_PEAK_STEP),
	FLT("vector.sfu", arch_unit, sfu, 0, NULL, 0, 1e6, "special-function results (exp, rsqrt ...) per clock per unit",
	    R_DEV_STEP),
	INT("matrix.units", arch_unit, mat_units, 0, "0", 0, 1024, "matrix units (tensor cores, cubes, MXUs) per compute unit",
	    R_PEAK),
	MAT(DT_FP64, "fp64"), MAT(DT_FP32, "fp32"), MAT(DT_TF32, "tf32"), MAT(DT_FP16, "fp16"),
	MAT(DT_BF16, "bf16"), MAT(DT_FP8, "fp8"), MAT(DT_FP4, "fp4"), MAT(DT_INT8, "int8"),
	MAT(DT_INT4, "int4"),
	FLT("matrix.fp16_acc16", arch_unit, mat_fp16_acc16, 0, NULL, 0, 1e7,
	    "fp16 MACs per clock with fp16 accumulate, where faster than matrix.fp16 (GeForce); default: matrix.fp16",
	    R_PEAK),
	FLT("matrix.pj_per_mac", arch_unit, mat_pj, 0, "0", 0, 100,
	    "energy of one dense 16-bit MAC with its operand delivery, in pJ (a MAC of another dtype costs "
	    "(bytes / 2)^0.86 of it: Horowitz's 45 nm table, sim/device/common.c); "
	    "with chip.tdp it sets the clock a power-limited GEMM sustains; 0 = never power-limited. Fitted: "
	    "docs/validation.md", "device model: power limit (sim/device/model_gemm.c); energy (sim/report/cost.c)"),
	BOOL("matrix.async", arch_unit, mat_async, "false",
	     "matrix instructions issue asynchronously from shared memory (Hopper wgmma, Blackwell tcgen05): "
	     "a warp can do vector or SFU work while its matrix op runs (FlashAttention-3)", R_DEV_STEP),
	FLT("matrix.sync_fraction", arch_unit, mat_sync_frac, 0, "1", 0.05, 1,
	    "share of the matrix rate (matrix.<dtype>, which the asynchronous instructions reach) that the synchronous "
	    "warp-level instruction reaches (mma.sync, as FlashAttention-2 and other kernels written for sm_80 issue "
	    "it); 1 where the unit has only that instruction. H100: 1365 of 2048 MAC/clk/SM, 2/3 "
	    "(bench/gpu/mma_sync.cu, docs/validation.md)",
	    "device model: FlashAttention-1/-2 and decode kernels (sim/device/model_attn.c, model_flash.c) and warp stepper (sim/step)"),
	FLT("matrix.fallback_load_cycles", arch_unit, mat_narrow_clk, 0, "0", 0, 1000,
	    "unit cycles per warp-wide global load of the GEMM kernel the library falls back to when a leading "
	    "dimension of A, B or C is not a multiple of 16 bytes: cuBLAS then runs CUTLASS sm_75/sm_80 kernels "
	    "(align1, align2) whose threads load 2 or 4 bytes each, without 16-byte vectors, and issue mma.sync "
	    "(matrix.sync_fraction); their main loop is bound by these loads. 0: no such fallback is modelled (the "
	    "GEMM is timed as if aligned), and none for a matrix-vector product (m or n of 1: cuBLAS's GEMV kernels). "
	    "H100: 9.1, fitted on the 10 misaligned LX rows measured here (in-sample; docs/validation.md); A100: the "
	    "same, the same sm_80 kernels (not fitted on A100 data)",
	    "device model: GEMMs with misaligned leading dimensions (sim/device/model_gemm.c)"),
	FLT("matrix.fallback_store_cycles", arch_unit, mat_narrow_st_clk, 0, "0", 0, 1000,
	    "unit cycles per warp-wide store of C in the epilogue of that fallback kernel when C's leading dimension "
	    "is not a multiple of 16 bytes (an output of an odd width, as a vocabulary of 50257): its threads store "
	    "2 or 4 bytes each, on the same load-store path as the main loop's narrow loads. 0: C's stores cost "
	    "nothing beyond its bytes. H100: fitted on the 2 LX rows whose only misaligned operand is C (in-sample); "
	    "A100: the same, the same sm_80 kernels (not fitted on A100 data)",
	    "device model: GEMMs with misaligned leading dimensions (sim/device/model_gemm.c)"),
	FLT("shared_mem_bandwidth", arch_unit, smem_Bpc, 0, "128", 1, 1e5,
	    "shared-memory (LDS) bytes per clock per unit (NVIDIA: 32 banks x 4 B = 128)", R_DEV_STEP),
	FLT("matrix.sparsity", arch_unit, sparsity, 0, "1", 1, 16, "speed-up of 2:4 structured sparsity on tf32 and narrower types (2 on A100/H100; 1 = none)",
	    "derived sparse peaks (arch/derive.c), printed by `sim info`"),
	FLT("latency.alu", arch_unit, lat_alu, 0, "4", 1, 1000,
	    "cycles from issue of a lane instruction (FFMA, FADD) to a dependent one: 4 for a dependent add.f32 "
	    "on A100 (Abdelkhalik et al., arXiv:2208.11174), 4 on Volta and Turing (Jia et al., arXiv:1804.06826, "
	    "arXiv:1903.07486); used by `sim step`", R_STEP),
	FLT("latency.sfu", arch_unit, lat_sfu, 0, "18", 1, 1000,
	    "cycles from issue of a special-function instruction (MUFU.EX2) to its result; assumed, of the order "
	    "of the MUFU latencies in the microbenchmarks of Jia et al. and Abdelkhalik et al.; used by `sim step`",
	    R_STEP),
	FLT("latency.shared", arch_unit, lat_smem, 0, "30", 1, 1000,
	    "cycles from issue of a shared-memory load (LDS, ldmatrix) to its result; assumed: about 20 on Volta "
	    "and Turing (Jia et al.), more on Ampere and Hopper; used by `sim step`", R_STEP),
	FLT("latency.mma", arch_unit, lat_mma, 0, "24", 0, 10000,
	    "cycles a matrix instruction's result takes beyond its pipe occupancy: an A100 mma.m16n8k16 occupies "
	    "its tensor core 8 cycles and completes in a few tens (Sun et al., IEEE TPDS 2022, \"Dissecting Tensor "
	    "Cores via Microbenchmarks\"); 24 assumed; used by `sim step`", R_STEP),
	FLT("latency.barrier", arch_unit, lat_bar, 0, "20", 0, 10000,
	    "cycles from the last warp's arrival at a CTA barrier (bar.sync) to the release of the waiting "
	    "warps; assumed; used by `sim step`", R_STEP),
};

#define MEMTYPES "HBM|HBM2|HBM2e|HBM3|HBM3e|GDDR5|GDDR5X|GDDR6|GDDR6X|GDDR7|LPDDR4|LPDDR4X|LPDDR5|LPDDR5X|DDR4|DDR5|SRAM"

static const struct arch_param dram_params[] = {
	ENUM("type", arch_mem, type, REQ, NULL, MEMTYPES, "device memory technology (SRAM for chips without DRAM)",
	     R_LABEL),
	QTY("capacity", UNIT_BYTES, arch_mem, size_bytes, REQ, NULL, 1e6, 1e15,
	    "capacity as the vendor's tool reports it, in binary units (nvidia-smi, rocminfo, npu-smi: an \"80 GB\" "
	    "H100 is 81559 MiB; GDDR with ECC on keeps 1/16)",
	    "device model and reports: whether a workload fits (sim/device, sim/report, `sim compare`)"),
	QTY("bandwidth", UNIT_BANDWIDTH, arch_mem, bw_Bps, 0, NULL, 1e6, 1e15,
	    "peak bandwidth; default: bus_width x data_rate",
	    "device model: memory time (sim/device/model.c); `sim roofline`"),
	QTY("latency", UNIT_TIME, arch_mem, latency_s, 0, NULL, 0, 1e-3, "load-to-use latency of a miss to device memory",
	    "device model: memory latency (sim/device/model.c)"),
	FLT("bus_width", arch_mem, bus_bits, 0, NULL, 0, 1e5, "interface width in bits (H100: 5120)", R_DERIVE_BW),
	QTY("data_rate", UNIT_BANDWIDTH, arch_mem, data_rate_bps, 0, NULL, 0, 1e12, "per-pin data rate, e.g. \"6.4 Gb/s\"",
	    R_DERIVE_BW),
};

static const struct arch_param l2_params[] = {
	STR("type", arch_mem, type, 0, "what it is called: \"L2\", \"SRAM\"", R_LABEL),
	QTY("size", UNIT_BYTES, arch_mem, size_bytes, REQ, NULL, 1e3, 1e12, "capacity (whole chip)",
	    "device model: what a working set reuses (sim/device/model.c, model_stream.c)"),
	QTY("bandwidth", UNIT_BANDWIDTH, arch_mem, bw_Bps, 0, NULL, 0, 1e16,
	    "peak read bandwidth (whole chip); default: bytes_per_clock x clock",
	    "device model: L2 time (sim/device/model.c); `sim roofline`"),
	FLT("bytes_per_clock", arch_mem, bytes_per_clk, 0, NULL, 0, 1e7, "read bytes per clock, whole chip (A100 L2: 5120)",
	    R_DERIVE_BW),
	QTY("clock", UNIT_FREQ, arch_mem, clock_hz, 0, NULL, 1e6, 1e10,
	    "clock of bytes_per_clock; default: the first compute group's clock", R_DERIVE_BW),
	QTY("latency", UNIT_TIME, arch_mem, latency_s, 0, NULL, 0, 1e-3, "load-to-use latency of a hit",
	    "device model: L2 hit latency (sim/device/model.c)"),
};

/* Of a further level the device model uses only the capacity (the cache a
   working set may fit in, sim/device/model.c); a working set that fits is
   served at memory.l2's bandwidth (device memory's where there is none). */
static const struct arch_param llc_params[] = {
	STR("type", arch_mem, type, 0, "what it is called: \"Infinity Cache\", \"L3\", \"SRAM\"", R_LABEL),
	QTY("size", UNIT_BYTES, arch_mem, size_bytes, REQ, NULL, 1e3, 1e12, "capacity (whole chip)",
	    "device model: the largest cache a working set reuses; dies share it (sim/device/model.c)"),
};

#define LINKKINDS "nvlink|nvlink_c2c|pcie|hccs|xgmi|infinity_fabric|mlulink|blink|esl|ici|ipulink|mtlink|metaxlink|" \
	"roce|ethernet|infiniband|cxl|d2d|other"

static const struct arch_param link_params[] = {
	ENUM("kind", arch_link, kind, REQ, NULL, LINKKINDS, "link technology",
	     "cluster platform: link class (sim/cluster/platform.c); device model: host copies over pcie"),
	STR("version", arch_link, version, 0, "generation, e.g. \"4.0\"", R_LABEL),
	INT("count", arch_link, count, 0, "1", 1, 1024, "links of this kind per device", R_LINK_BW),
	QTY("bandwidth", UNIT_BANDWIDTH, arch_link, bw_Bps, 0, NULL, 1e6, 1e14,
	    "per link, per direction; default for pcie: gen x lanes", R_LINK_BW),
	QTY("latency", UNIT_TIME, arch_link, latency_s, 0, NULL, 0, 1e-2,
	    "latency of a host copy over this link, kind pcie only (default 1 us); collectives take theirs from the "
	    "collective library's table (model.coll_latency_scale)",
	    "device model: host copies (sim/device/model.c)"),
	INT("gen", arch_link, pcie_gen, 0, NULL, 1, 7, "PCIe generation (kind pcie)",
	    "the link bandwidth where unset (arch/derive.c)"),
	INT("lanes", arch_link, pcie_lanes, 0, NULL, 1, 32, "PCIe lanes (kind pcie)",
	    "the link bandwidth where unset (arch/derive.c)"),
};

static const struct arch_param system_params[] = {
	INT("devices_per_node", arch_system, devices_per_node, REQ, NULL, 1, 1024, "devices in one node (DGX H100: 8)",
	    R_PLAT),
	/* the names of sim/cluster/topo.c's table, in its order (arch/ cannot
	   include sim/; tests/test_coll.c checks that the two lists agree) */
	ENUM("topology", arch_system, topology, 0, "switch", "switch|full_mesh|hybrid_cube_mesh|ring|torus|pcie_host",
	     "intra-node topology", R_PLAT),
	STR("link", arch_system, link, 0, "name of the links.* group that connects devices in a node; default: none (PCIe)",
	    R_PLAT),
	BOOL("in_switch_reduction", arch_system, in_switch_reduction, "false", "switch reduces in the network (NVLS / SHARP)",
	     "cluster platform, collectives: NVLS (sim/cluster/platform.c, coll.c)"),
	FLT("nvls_efficiency", arch_system, nvls_eff, 0, NULL, 0.1, 1,
	    "with in_switch_reduction: the collective library's efficiency of an in-switch all-reduce for this GPU "
	    "generation, the share of the links' usable bandwidth it reaches (NCCL's nvlsEfficiency, "
	    "src/tuning/nvls.cc: Hopper 0.85, Blackwell 0.74); required with in_switch_reduction",
	    "collectives: NVLS bandwidth (sim/cluster/platform.c, sim/cluster/coll/nvls.c)"),
	INT("nvls_channels", arch_system, nvls_channels, 0, NULL, 2, 64,
	    "with in_switch_reduction: the channels (CTAs) the library runs it on inside a node, one of them kept for "
	    "synchronisation (NCCL's NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL 24, src/transport/nvls.cc); "
	    "required with in_switch_reduction",
	    "collectives: NVLS bandwidth (sim/cluster/platform.c, sim/cluster/coll/nvls.c)"),
	INT("nics_per_device", arch_system, nics_per_device, 0, "0", 0, 64, "scale-out NICs per device; 0 = no inter-node network (a trace must fit in one node)",
	    "cluster platform: NIC links and whether nodes connect (sim/cluster/platform.c)"),
	QTY("nic_bandwidth", UNIT_BANDWIDTH, arch_system, nic_bw_Bps, 0, NULL, 0, 1e13, "per NIC, per direction (\"400 Gb/s\")",
	    "cluster platform: NIC links (sim/cluster/platform.c)"),
	QTY("nic_latency", UNIT_TIME, arch_system, nic_lat_s, 0, "0 us", 0, 1e-3,
	    "the latency the fabric's network plugin reports to NCCL (ncclNetProperties.latency; NCCL's InfiniBand "
	    "and socket transports report none); NCCL adds it to every step that crosses the network, twice with "
	    "the Simple protocol",
	    "collectives: network steps' latency (sim/cluster/coll/common.c)"),
	INT("nodes", arch_system, nodes, 0, "0", 0, 1e6, "nodes in the cluster; 0 = as many as the trace's ranks need",
	    "cluster platform: the most ranks a trace may have (sim/cluster/platform.c)"),
	FLT("oversubscription", arch_system, oversubscription, 0, "1", 1, 64, "oversubscription of the inter-node network: a node's uplink carries its NICs' bandwidth / this (1 = non-blocking)",
	    "cluster platform: node uplinks (sim/cluster/platform.c)"),
};

#define PUBM(dt, name) QTY("matrix." name, UNIT_FLOPS, arch_published, mat[dt], 0, NULL, 0, 1e18, \
	"published dense " name " matrix peak (OPS for ints)", R_PUB)
#define PUBV(dt, name) QTY("vector." name, UNIT_FLOPS, arch_published, vec[dt], 0, NULL, 0, 1e18, \
	"published " name " vector (non-tensor) peak", R_PUB)

static const struct arch_param published_params[] = {
	PUBM(DT_FP64, "fp64"), PUBM(DT_FP32, "fp32"), PUBM(DT_TF32, "tf32"), PUBM(DT_FP16, "fp16"),
	PUBM(DT_BF16, "bf16"), PUBM(DT_FP8, "fp8"), PUBM(DT_FP4, "fp4"), PUBM(DT_INT8, "int8"),
	PUBM(DT_INT4, "int4"),
	PUBV(DT_FP64, "fp64"), PUBV(DT_FP32, "fp32"), PUBV(DT_FP16, "fp16"), PUBV(DT_BF16, "bf16"),
	PUBV(DT_INT8, "int8"),
	STR("source", arch_published, source, 0, "where the published figures come from", R_LABEL),
};
static const struct arch_param model_params[] = {
	QTY("launch_overhead", UNIT_TIME, arch_model, launch_s, 0, "4 us", 0, 1e-3,
	    "what a kernel adds to a stream of back-to-back kernels beyond its work (the launch gap, ramp-up and "
	    "drain)",
	    R_DEV),
	QTY("launch_gap", UNIT_TIME, arch_model, launch_gap_s, 0, "1.5 us", 0, 1e-3,
	    "of launch_overhead, the idle gap a profiler shows before a kernel launched on its own behind a running one "
	    "(the rest, the ramp-up and drain, is inside the kernel's span); measured: CUPTI end to next start of "
	    "14,700 such pairs in 18 PyTorch traces on H100 and H200, 1.34 to 1.73 us a trace (docs/import.md)",
	    "device model: a kernel's profiled duration and its gap (sim op, sim run --timeline-kineto, the import's "
	    "comparison per kernel family), and what launch=graph saves"),
	QTY("graph_launch_gap", UNIT_TIME, arch_model, graph_gap_s, 0, "0.1 us", 0, 1e-3,
	    "the gap before a kernel launched from a CUDA graph (op key launch=graph), in place of launch_gap; "
	    "measured: 0.05 to 0.10 us inside graph replays of Llama-3 8B decode steps on an H200 "
	    "(traces/kineto/h200-2026-11-30/kineto_decode_b*.json.gz)",
	    "device model: ops with launch=graph (sim gen --launch graph, sim import --host graph)"),
	FLT("dram_efficiency", arch_model, dram_eff, 0, "0.92", 0.1, 1,
	    "fraction of peak device-memory bandwidth a streaming kernel reaches (refresh, turnaround)", R_DEV),
	FLT("dram_write_cost", arch_model, write_cost, 0, "1.25", 1, 4,
	    "device-memory bandwidth a written byte takes, in read bytes, where reads and writes mix (the bus's "
	    "turnaround; a stream with fewer reads than writes pays it on as many writes as it has reads)",
	    "device model and warp stepper (sim/device, sim/step)"),
	FLT("static_power", arch_model, static_power, 0, "0.3", 0, 0.9,
	    "share of chip.tdp not available to the matrix units (leakage, memory, uncore)",
	    "device model: power limit (sim/device/model_gemm.c); `sim compare` (sim/cli/cmd_compare.c)"),
	FLT("l2_efficiency", arch_model, l2_eff, 0, "0.9", 0.1, 1, "fraction of peak L2 bandwidth a streaming kernel reaches",
	    R_DEV),
	FLT("mma_efficiency", arch_model, mma_eff, 0, "0.95", 0.1, 1,
	    "fraction of the matrix units' rate a GEMM main loop sustains (issue and sync overhead)", R_DEV),
	FLT("sync_efficiency", arch_model, sync_eff, 0, "0.73", 0.1, 1,
	    "on units whose matrix pipe is asynchronous (compute.*.matrix.async: Hopper's wgmma), the share of the "
	    "synchronous instruction's peak (matrix.sync_fraction, a loop of mma.sync alone) that a kernel built on "
	    "it (FlashAttention-1/2, the library's fallback GEMMs) sustains among its other instructions",
	    R_DEV),
	FLT("loaded_latency", arch_model, loaded_latency, 0, "1.5", 1, 10,
	    "memory latency under full load as a multiple of the idle latency (queueing)", R_DEV),
	QTY("bytes_per_thread", UNIT_BYTES, arch_model, bytes_per_thread, 0, "16 B", 1, 1024,
	    "bytes each thread of an elementwise kernel keeps in flight (one 16-byte vector load)", R_DEV),
	QTY("dram_latency", UNIT_TIME, arch_model, dram_latency_s, 0, "500 ns", 1e-9, 1e-4,
	    "device-memory latency used where memory.device.latency is unset", R_DEV),
	QTY("l2_latency", UNIT_TIME, arch_model, l2_latency_s, 0, "200 ns", 1e-9, 1e-4,
	    "L2 hit latency used where memory.l2.latency is unset", R_DEV),
	FLT("link_efficiency", arch_model, link_eff, 0, "0.75", 0.1, 1,
	    "fraction of an intra-node link's per-direction bandwidth (NVLink, xGMI, PCIe) that collective and copy "
	    "traffic reaches (protocol, flow control)",
	    "cluster platform: link bandwidths (sim/cluster/platform.c)"),
	FLT("nic_efficiency", arch_model, nic_eff, 0, "0.9", 0.1, 1,
	    "fraction of a scale-out NIC's line rate that collective and copy traffic reaches (RDMA headers, the "
	    "collective library's proxy)",
	    "cluster platform: NIC bandwidths (sim/cluster/platform.c)"),
	QTY("coll_chunk", UNIT_BYTES, arch_model, coll_chunk, 0, "1 MiB", 1, 1e9,
	    "bytes a pipelined collective step moves before the next step starts (chunk x channels): its fill cost",
	    "collectives: pipeline fill (sim/cluster/coll.c)"),
	FLT("coll_latency_scale", arch_model, coll_lat_scale, 0, "1", 0.1, 10,
	    "multiplies the collective library's per-step and launch latencies (sim/cluster/coll.c table)",
	    "collectives: latency table (sim/cluster/coll.c)"),
};
/* clang-format on */

#define N(a) (int)(sizeof a / sizeof a[0])

#define AT(fld)  offsetof(struct arch_chip, fld), 0
#define ARR(fld) offsetof(struct arch_chip, fld), sizeof(((struct arch_chip *)0)->fld[0])

const struct arch_section arch_sections[] = {
    {"chip", SF_REQUIRED, chip_params, N(chip_params), 0, 0, "the product"},
    {"dies", 0, dies_params, N(dies_params), AT(dies), "chiplets and die-to-die links (default: one die)"},
    {"compute.*", SF_REQUIRED | SF_MULTI, unit_params, N(unit_params), ARR(units),
     "groups of identical compute units, one group per kind (most chips have one: compute.sm, compute.cu ...)"},
    {"memory.device", SF_REQUIRED, dram_params, N(dram_params), AT(dram),
     "device memory: HBM, GDDR, LPDDR, DDR (or SRAM)"},
    {"memory.l2", 0, l2_params, N(l2_params), AT(l2), "last-level on-chip cache shared by the compute units"},
    {"memory.llc", 0, llc_params, N(llc_params), AT(llc),
     "a further on-chip level: Infinity Cache, large SRAM, L3 (between L2 and device memory)"},
    {"links.*", SF_MULTI, link_params, N(link_params), ARR(links),
     "chip-to-chip and host links, one group per kind (links.nvlink, links.pcie ...)"},
    {"system", 0, system_params, N(system_params), AT(sys), "the node and cluster the device is deployed in"},
    {"model", 0, model_params, N(model_params), AT(model),
     "constants of the device model that no datasheet gives; the validation suite fits them on all its rows and "
     "leaving each source out (docs/validation.md, Fitted constants)"},
    {"published", 0, published_params, N(published_params), AT(pub),
     "vendor figures, printed beside the derived ones by `sim info` (never used by the model)"},
};
const int arch_nsections = N(arch_sections);

static const char *type_text(const struct arch_param *p, char *buf, size_t len)
{
	switch (p->type) {
	case P_INT: return "integer";
	case P_FLOAT: return "number";
	case P_BOOL: return "true|false";
	case P_STR: return "string";
	case P_ENUM: snprintf(buf, len, "one of %s", p->choices); return buf;
	case P_QTY: snprintf(buf, len, "%s, e.g. %s", units_kind_name(p->unit), units_example(p->unit)); return buf;
	}
	return "?";
}

/* A Markdown table cell: '|' would end it. */
static void md_cell(FILE *f, const char *text)
{
	fputs("| ", f);
	for (const char *c = text; *c; c++) {
		if (*c == '|')
			fputc('\\', f);
		fputc(*c, f);
	}
	fputc(' ', f);
}

void arch_params_help(FILE *f, int md)
{
	char buf[400];
	if (md) {
		fprintf(f,
		        "# Config reference\n\n"
		        "Generated by `sim help config --markdown` from the parameter tables in "
		        "`arch/params.c`; do not edit by hand.\n\n"
		        "A config is a libconfig file. Quantities are strings with units (`\"3.35 TB/s\"`, "
		        "`\"1830 MHz\"`, `\"50 MiB\"`, `\"1 us\"`): decimal prefixes are powers of 1000 "
		        "(TB = 1e12 B), binary ones powers of 1024 (TiB = 2^40 B), `b` is a bit and `B` a byte. "
		        "A key not listed here is an error. `inherits = \"base.cfg\";` at the top level loads "
		        "another config (relative to this one) and overrides it key by key; `--set path=value` "
		        "overrides are applied last. `*` in a path stands for a group name of your choice "
		        "(`compute.sm`, `links.nvlink`). Every key is read by a model, or only printed by `sim info` "
		        "as a label; the column *read by* says which.\n\n");
	} else {
		fprintf(f, "Config parameters (libconfig; quantities are strings with units, e.g. \"3.35 TB/s\").\n"
		           "A key not listed is an error. `inherits = \"base.cfg\";` merges another config; "
		           "--set path=value overrides last.\n"
		           "Every key is read by a model (\"read by\"), or is a label only `sim info` prints.\n");
	}
	for (int s = 0; s < arch_nsections; s++) {
		const struct arch_section *sec = &arch_sections[s];
		if (md)
			fprintf(f,
			        "## `%s`%s\n\n%s.\n\n"
			        "| key | type | default | description | read by |\n|---|---|---|---|---|\n",
			        sec->prefix, (sec->flags & SF_REQUIRED) ? " (required)" : "", sec->desc);
		else
			fprintf(f, "\n[%s]%s  %s\n", sec->prefix, (sec->flags & SF_REQUIRED) ? " (required)" : "",
			        sec->desc);
		for (int i = 0; i < sec->nparams; i++) {
			const struct arch_param *p = &sec->params[i];
			const char *def = (p->flags & PF_REQUIRED) ? "required" : p->def ? p->def : "unset";
			if (!md) {
				fprintf(f, "  %-28s %-10s %s\n  %28s (%s)\n  %28s read by: %s\n", p->key, def, p->desc,
				        "", type_text(p, buf, sizeof buf), "", p->reader);
				continue;
			}
			fprintf(f, "| `%s.%s` ", sec->prefix, p->key);
			md_cell(f, type_text(p, buf, sizeof buf));
			md_cell(f, def);
			md_cell(f, p->desc);
			md_cell(f, p->reader);
			fputs("|\n", f);
		}
		if (md)
			fprintf(f, "\n");
	}
}
