"""Kaitai Struct specs: an independent second definition of Kafka's on-disk formats.

The ``.ksy`` files here describe ``.log`` segments (magic 0, 1, 2), magic-2
records, ``.index``, ``.timeindex``, ``.txnindex``, checkpoint files and
``partition.metadata`` from Kafka's documented layouts, independently of the
Construct schemas in ``lethe_formats.records``/``storage`` and of the fast
path. Tests compile them with the official Kaitai compiler
(:func:`~lethe_formats.ksy.compiler.compile_specs`, needs Node and
``npm ci --prefix formats/kaitai``), load the generated parsers
(:func:`~lethe_formats.ksy.compiler.load_compiled`) and convert their output
with :mod:`lethe_formats.ksy.adapter` / :mod:`lethe_formats.ksy.adapter_files`,
then demand the same model values from all three decoders.

Nothing here needs Node at import time: compiled code is never committed and
is only produced on request.
"""

from __future__ import annotations

from lethe_formats.ksy.compiler import (
    KaitaiCompileError,
    KaitaiSpecs,
    KaitaiUnavailableError,
    compile_specs,
    load_compiled,
)

__all__ = [
    "KaitaiCompileError",
    "KaitaiSpecs",
    "KaitaiUnavailableError",
    "compile_specs",
    "load_compiled",
]
