"""Kafka's security formats, shared by the reference broker and lethe's clients.

SCRAM message computation (:mod:`.scram`), JAAS option lines (:mod:`.jaas`),
keystores and truststores as Kafka's ``ssl.*`` settings name them, and the TLS
contexts and certificate principals built from them (:mod:`.tls`). Pure: the
modules compute messages and ``ssl.SSLContext`` objects; sockets stay with the
callers (the broker's asyncio edge, the clients' blocking connections).
"""
