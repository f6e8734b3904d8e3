"""lethe_formats: Kafka's on-disk and wire formats, bytes to typed values and back.

A pure library (no sockets, no asyncio, no Spark). Construct schemas are the
normative definitions; ``records.scan`` is the fast path held to parity with
them; ``ksy/`` holds the Kaitai Struct specs, an independent second definition.
"""

__version__ = "0.1.0"
