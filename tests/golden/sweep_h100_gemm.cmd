sweep configs/h100.cfg --op 'gemm m=8192 n=8192 k=8192 dtype=bf16' --set compute.sm.count=66,132 --set 'memory.device.bandwidth=2TB/s,3.35TB/s,0TB/s'
