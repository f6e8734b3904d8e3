"""lethe_tools: the ``lethe`` command line (dump, verify, checkpoint, fixtures, ...)."""
