run configs/mi300x.cfg traces/dp_step_16.trace
