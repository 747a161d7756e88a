B
y_ReduceL1Jæ$AëAÂ“Õ@