"""`clustersim view`: an interactive page over any run's output directory (front-end layer; reads outputs only)."""
