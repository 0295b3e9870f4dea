"""The ulp error of device math against MPFR: python examples/check_accuracy.py [device]"""
import sys

import numpy as np

from pytest_gpuperf import api

x = np.linspace(-80.0, 80.0, 4096, dtype=np.float32)
dev = api.device(sys.argv[1] if len(sys.argv) > 1 else "0")
for expr in ("exp(x0)", "native_exp(x0)", "exp2(x0 * 1.44269504f)"):  # the last: a common hand rewrite
    r = api.check_accuracy(expr, "exp", [x], dev=dev)
    print(f"{expr:28s} vs MPFR exp: max {r.max_ulp:.3g} ulp (at x = {r.worst_input[0]!r}), mean {r.mean_ulp:.3g} ulp, "
          f"{r.n} inputs, mismatched classes {r.mismatches or 'none'}")
