help merge
