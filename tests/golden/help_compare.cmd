help compare
