compare configs/h100.cfg configs/rtx4090.cfg traces/llama2_70b_decode.trace --json
