"""lethe_conformance: requirement catalog runner, targets, reports and the pytest plugin."""
