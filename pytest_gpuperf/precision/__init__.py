"""Precision studies: integer quantization (``quant_*``) and other precision/performance trade-offs."""
