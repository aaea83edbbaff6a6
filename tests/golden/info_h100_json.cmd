info configs/h100.cfg --json
