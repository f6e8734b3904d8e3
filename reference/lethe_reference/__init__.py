"""lethe_reference: the reference broker (storage, retention, cleaner, cluster), built on lethe_formats."""
