"""Renderers: kafka-dump-log's exact text layout, JSON lines, and line output.

They receive typed values from ``lethe_tools.inspect`` and own every byte
written to stdout/stderr; nothing here reads files or decides what is wrong.
"""
