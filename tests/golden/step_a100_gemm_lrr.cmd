step configs/a100.cfg --kernel 'gemm m=1024 n=1024 k=1024 dtype=fp16' --from 2000 --cycles 12
