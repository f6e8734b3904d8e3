"""A small blocking Kafka client on :mod:`lethe_formats.protocol`, for lethe's tools.

Modules
-------
``config``       client properties (``--command-config``) with Kafka's defaults
``connection``   one TCP connection: framing, correlation ids, ApiVersions choice
``admin``        :class:`~lethe_tools.kafka_client.admin.AdminClient`: Metadata,
                 DeleteRecords to partition leaders with the Java admin's retries
``java_errors``  error codes as the Java client's exception classes and messages

Why a client of its own: the tools must print what Kafka's Java tools print
(exception class names, retry and timeout behaviour), which no Python client
library exposes, and they must run where only lethe is installed. Everything is
blocking and single-threaded; every wait has a deadline.
"""

__all__: list[str] = []
