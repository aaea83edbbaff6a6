roofline configs/rtx3080.cfg configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' --op 'elem op=add n=67108864 dtype=fp32'
