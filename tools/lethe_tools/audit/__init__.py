"""``lethe audit``: a PySpark pipeline over Kafka log directories.

Spark distributes file paths; each task decodes its files with lethe_formats
into rows of the explicit schemas in :mod:`lethe_tools.audit.schemas`, the job
writes them as Parquet, and the checks (:mod:`lethe_tools.audit.checks`) run
as column expressions over those tables. Importing this package imports no
Spark: the modules that need pyspark import it themselves.

Modules, in data-flow order::

    discover     log dirs, partition dirs and files, by listing only (driver)
    decode       one item -> rows: segments (fast path), with files (indexes,
                 checkpoints, partition.metadata), offsets (__consumer_offsets)
                 and rows (column buffers, problem rows)
    datasource   the "kafka-log" Spark data source: planning and tasks
    tables       one cached read split into the tables, records read on its own
    job          Parquet tables -> checks.run_all -> report.write
    session      SparkSession with the Java 17 check; progress: stage lines
    schemas      the tables' StructTypes (the contract with the checks)
"""
