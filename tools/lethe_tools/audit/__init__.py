"""``lethe audit``: a PySpark pipeline over Kafka log directories.

Spark distributes file paths; each task decodes its files with lethe_formats
into rows of the explicit schemas in :mod:`lethe_tools.audit.schemas`, the job
writes them as Parquet, and the checks (:mod:`lethe_tools.audit.checks`) run
as column expressions over those tables. Importing this package imports no
Spark: the modules that need pyspark import it themselves.
"""
