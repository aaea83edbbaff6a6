step configs/h100.cfg --kernel 'gemm m=8192 n=8192 k=8192 dtype=bf16' --summary
