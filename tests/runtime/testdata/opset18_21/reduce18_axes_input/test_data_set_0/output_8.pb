By_ReduceSumSquareJ
•ƒAd‹+A‡aA