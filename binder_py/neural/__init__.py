"""Neural calls: how f_col/f_val requests are asked and their answers read."""
