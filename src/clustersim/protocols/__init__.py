"""Front ends that let decision processes outside clustersim drive a simulation over a wire protocol."""
