run configs/a100.cfg traces/pipeline_4.trace
