help sweep
