"""The reference broker's storage engine: segments, logs, recovery, log directories.

Split as Kafka splits ``storage/internals/log`` (see each module's docstring);
import from the submodules.
"""
