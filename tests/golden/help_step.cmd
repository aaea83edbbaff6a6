help step
