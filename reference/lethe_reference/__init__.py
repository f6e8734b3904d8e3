"""lethe_reference: the reference broker, built on lethe_formats.

Storage, retention, cleaner and cluster logic arrive with the broker issue.
"""
