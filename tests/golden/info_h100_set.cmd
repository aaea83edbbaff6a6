info configs/h100.cfg --set compute.sm.count=114 --set "memory.device.bandwidth=2 TB/s"
