"""Several GPUs in one host.

* :mod:`.identity` — which devices are one physical GPU (a CUDA and an NVIDIA-OpenCL view of one card
  share its PCI bus id), so a worker owns a whole card, never half of it;
* :mod:`.pinning` — pytest-xdist: ``-n auto`` = one worker per physical GPU, and a scheduler that sends
  every test of one GPU to one worker;
* :mod:`.workers` — what a worker hands back to the controller (summary lines, results documents), so
  the summary and the sibling check are made once, on the controller;
* :mod:`.siblings` — the sibling check: cards of one model side by side, and the card that is
  significantly worse than its siblings;
* :mod:`.cli` — ``gpuperf siblings`` on saved results files.
"""
