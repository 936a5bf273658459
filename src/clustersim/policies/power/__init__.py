"""Power policies (which idle nodes to switch off, which sleeping ones to switch on) and `powered.PoweredProcess`,
which combines them with any scheduling policy into one decision process."""
