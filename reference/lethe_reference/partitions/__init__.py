"""KIP-694 (reducing partitions), an opt-in extension of the reference broker.

``state``     partition modes, pending reductions and the two broker config names
``deletion``  starting a reduction, the delayed-deletion task, deleting partitions and
              their committed offsets

The DeletePartitions handler is :mod:`lethe_reference.handlers.delete_partitions`.
"""
