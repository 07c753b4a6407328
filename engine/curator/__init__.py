"""The curator: detectors that only propose (scan), the queue and its runs (service), applying
and undoing in one transaction (apply), what members looked like when proposed (state), and the
report files (report)."""
