"""Small shared helpers (atomic file writes, provenance)."""
