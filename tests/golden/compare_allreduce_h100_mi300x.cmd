compare configs/h100.cfg configs/mi300x.cfg traces/allreduce_8.trace
