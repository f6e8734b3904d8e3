"""Format conformance for Kafka's on-disk formats, for decoders in any language.

Theory of operation
-------------------
``fixtures/formats/`` holds the cases (data only: an input, and the decoded
value or the error id expected). This package runs them:

``cases``      load, schema-check and resolve the case files;
``tagged``     the tagged JSON values are written in, and how they compare;
``adapters``   the implementation under test: the subprocess contract
               (stdin/stdout/exit code, documented in fixtures/formats/README.md)
               or any in-process object with the same ``decode`` method;
``runner``     run cases through an adapter, grade each one (pass, fail,
               implementation error, known failure), summarise;
``__main__``   ``python -m lethe_conformance.formats --adapter CMD``.

None of these import ``lethe_formats``: the suite judges any implementation.
lethe's own decoders are one adapter among others (``lethe_adapter``, and
the ``lethe-format-adapter`` command of ``lethe_conformance.formats_adapter``).
The ``authoring*`` modules are how the cases were made (``authoring.py``).
"""
