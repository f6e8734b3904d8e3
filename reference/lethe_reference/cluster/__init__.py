"""Cluster services of the reference broker: coordinators (``group``), and later
the controller, replication and purgatory."""
