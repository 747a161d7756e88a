B
y_ReduceL2J[Ç@\Q@Q8@