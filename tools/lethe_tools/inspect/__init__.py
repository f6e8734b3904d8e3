"""Library code behind ``lethe dump``, ``lethe verify`` and ``lethe checkpoint``.

Commands stay thin (argparse -> this package -> ``lethe_tools.render``):
``dump`` and ``log_walk`` traverse files and emit typed events to a renderer;
``verify_*`` run checks that collect :class:`~.problems.Problem` values instead
of raising; ``checkpoint_io`` reads, writes and validates checkpoint files.
Nothing here formats output.
"""
