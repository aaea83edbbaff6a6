compare configs/h100.cfg configs/a100.cfg configs/rtx4090.cfg configs/ascend910b.cfg --op 'gemm m=8192 n=8192 k=8192 dtype=bf16'
