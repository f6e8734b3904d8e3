"""The transaction coordinator: states, metadata, EndTxn rules, the coordinator itself."""
