// mma_sync.cu -- throughput of the synchronous warp-level matrix instruction
// (mma.sync.aligned.m16n8k16, bf16 and fp16 inputs, fp32 accumulate) per SM
// and clock, on whatever GPU runs it. The kernels FlashAttention-2 and other
// sm_80-era code use issue this instruction; on a chip whose matrix units also
// take asynchronous warpgroup instructions (Hopper's wgmma) it may not reach
// the datasheet's matrix peak, which those instructions are rated at.
//
// Each warp runs ILP independent accumulator chains of mma.sync from
// registers (no memory traffic); one wave of blocks (every block resident)
// so the SM cycle counter (clock64) of each block spans the whole kernel.
// Prints, per configuration, MACs per clock per SM (cycles counted by the
// SMs themselves, so independent of the clock the power limit sets) and
// TFLOP/s (CUDA events). Not run by the tests (CI has no GPU): docs/validation.md.
//
// build: nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o mma_sync mma_sync.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                                       \
	do {                                                                                                           \
		cudaError_t e_ = (x);                                                                                  \
		if (e_ != cudaSuccess) {                                                                               \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                    \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

template <int ILP, bool BF16> __global__ void mma_loop(int iters, float *sink, unsigned long long *cycles)
{
	// operands in [1, 2): 0x3f80 is 1.0 in bf16, 0x3c00 in fp16
	unsigned base = BF16 ? 0x3f80u : 0x3c00u;
	unsigned t = threadIdx.x & 63u;
	unsigned a0 = (base + t) | ((base + t + 1) << 16), a1 = a0 ^ 0x00010001u, a2 = a0 ^ 0x00020002u,
	         a3 = a0 ^ 0x00030003u;
	unsigned b0 = a0 ^ 0x00040004u, b1 = a0 ^ 0x00050005u;
	float acc[ILP][4];
#pragma unroll
	for (int j = 0; j < ILP; j++)
		acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
	__syncthreads();
	unsigned long long t0 = clock64();
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int j = 0; j < ILP; j++) {
			if (BF16)
				asm volatile(
				    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
				    "{%8,%9}, {%0,%1,%2,%3};\n"
				    : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
				    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
			else
				asm volatile(
				    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
				    "{%8,%9}, {%0,%1,%2,%3};\n"
				    : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
				    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
		}
	}
	__syncthreads();
	unsigned long long t1 = clock64();
	float s = 0.f;
#pragma unroll
	for (int j = 0; j < ILP; j++)
		s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
	sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
	if (threadIdx.x == 0)
		cycles[blockIdx.x] = t1 - t0;
}

template <int ILP, bool BF16> static void run(int sms, int warps, int blocks_per_sm, int iters)
{
	int blocks = sms * blocks_per_sm, threads = warps * 32;
	float *sink;
	unsigned long long *cyc;
	CHECK(cudaMalloc(&sink, sizeof(float) * blocks * threads));
	CHECK(cudaMalloc(&cyc, sizeof(unsigned long long) * blocks));
	mma_loop<ILP, BF16><<<blocks, threads>>>(iters / 10, sink, cyc); // warm-up
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventRecord(e0));
	mma_loop<ILP, BF16><<<blocks, threads>>>(iters, sink, cyc);
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(e1));
	CHECK(cudaEventSynchronize(e1));
	float ms;
	CHECK(cudaEventElapsedTime(&ms, e0, e1));
	unsigned long long *h = (unsigned long long *)malloc(sizeof *h * blocks);
	CHECK(cudaMemcpy(h, cyc, sizeof *h * blocks, cudaMemcpyDeviceToHost));
	double cmax = 0;
	for (int i = 0; i < blocks; i++)
		cmax = h[i] > cmax ? (double)h[i] : cmax;
	double macs = (double)blocks * warps * iters * ILP * 16.0 * 8 * 16;
	printf("%s\tILP=%d\twarps/SM=%d\tMAC/clk/SM=%.1f\tTFLOP/s=%.1f\tclock_MHz=%.0f\n", BF16 ? "bf16" : "fp16", ILP,
	       warps * blocks_per_sm, macs / sms / cmax, 2 * macs / (ms * 1e-3) / 1e12, cmax / (ms * 1e-3) / 1e6);
	free(h);
	CHECK(cudaFree(sink));
	CHECK(cudaFree(cyc));
}

int main()
{
	cudaDeviceProp p;
	CHECK(cudaGetDeviceProperties(&p, 0));
	printf("device %s, %d SMs, cc %d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
	int sms = p.multiProcessorCount, iters = 1000000;
	for (int w = 4; w <= 16; w *= 2) {
		run<1, true>(sms, w, 1, iters);
		run<2, true>(sms, w, 1, iters);
		run<4, true>(sms, w, 1, iters);
		run<8, true>(sms, w, 1, iters / 2);
	}
	run<4, true>(sms, 8, 2, iters);
	run<4, false>(sms, 8, 1, iters);
	run<8, false>(sms, 16, 1, iters / 2);
	return 0;
}
