"""Message definitions, one module per API (request and response together).

Every module in this package is imported by ``registry`` (found with
``pkgutil``), so adding an API means adding a module: no list to edit. Field
layouts are written from the facts of Kafka 4.0's message specs
(``clients/src/main/resources/common/message/*.json``), never copied from them.
"""
