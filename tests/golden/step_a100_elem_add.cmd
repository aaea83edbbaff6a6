step configs/a100.cfg --kernel 'elem op=add n=16777216 dtype=fp16' --from 8000 --cycles 3
