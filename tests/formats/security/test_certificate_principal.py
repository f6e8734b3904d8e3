"""An SSL connection's principal is ``User:`` + the client certificate's subject as Java's
``X500Principal.getName()`` prints it (RFC 2253), which Kafka's default principal
builder uses unchanged (``ssl.principal.mapping.rules=DEFAULT``).

Expected strings were printed by Java 17 (``jshell``:
``cert.getSubjectX500Principal().getName()``) for certificates with these subjects.
"""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from lethe_formats.security.keystores import SslConfigError
from lethe_formats.security.tls import certificate_principal, check_principal_mapping


def der_with_subject(attributes: list[x509.NameAttribute[str]]) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(attributes)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC))
        .not_valid_after(datetime.datetime(2099, 1, 1, tzinfo=datetime.UTC))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)


def test_most_specific_rdn_first_with_rfc2253_escapes_and_hex_for_other_types() -> None:
    der = der_with_subject(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc."),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, " lead+trail "),
            x509.NameAttribute(NameOID.COMMON_NAME, '#bob="x";<y>\\z'),
            x509.NameAttribute(NameOID.EMAIL_ADDRESS, "bob@example.com"),
            x509.NameAttribute(NameOID.SERIAL_NUMBER, "1234"),
            x509.NameAttribute(NameOID.DOMAIN_COMPONENT, "example"),
            x509.NameAttribute(NameOID.USER_ID, "bob"),
            x509.NameAttribute(NameOID.STREET_ADDRESS, "Main St 1"),
        ]
    )
    assert certificate_principal(der) == (
        "User:STREET=Main St 1,UID=bob,DC=example,2.5.4.5=#130431323334,"
        "1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d,"
        'CN=\\#bob\\=\\"x\\"\\;\\<y\\>\\\\z,OU=\\ lead\\+trail\\ ,O=Acme\\, Inc.,C=DE'
    )


def test_no_certificate_is_anonymous() -> None:
    assert certificate_principal(None) == "User:ANONYMOUS"
    assert certificate_principal(b"") == "User:ANONYMOUS"


def test_only_the_default_mapping_rule_is_accepted() -> None:
    check_principal_mapping({})
    check_principal_mapping({"ssl.principal.mapping.rules": "DEFAULT"})
    with pytest.raises(SslConfigError, match=r"ssl\.principal\.mapping\.rules=RULE:"):
        check_principal_mapping({"ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/,DEFAULT"})
