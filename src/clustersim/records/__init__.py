"""Per-job records and the outputs computed from them, streamed as jobs end."""
