"""An SSL connection's principal is ``User:`` + the client certificate's subject as Java's
``X500Principal.getName()`` prints it (RFC 2253), which Kafka's default principal
builder maps with ``ssl.principal.mapping.rules`` (DEFAULT: unchanged).

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
from lethe_formats.security.principal_mapping import NoMatchingRuleError, principal_mapper
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


KAFKA_RULES = ", ".join(
    [
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
        "DEFAULT",
    ]
)


@pytest.mark.parametrize(
    ("dn", "name"),
    [
        ("CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"),
        ("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"),
        ("cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"),
        ("cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"),
        ("OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
    ],
)
def test_mapping_rules_map_as_kafkas_ssl_principal_mapper(dn: str, name: str) -> None:
    """The rules and names of Kafka 4.0's SslPrincipalMapperTest."""
    assert principal_mapper(KAFKA_RULES).name(dn) == name


def test_an_escaped_comma_in_a_dn_survives_a_rule() -> None:
    mapper = principal_mapper("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT")
    assert mapper.name("CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz") == "Tkac\\, Adam"


@pytest.mark.parametrize(
    "rules",
    [
        "default",
        "DEFAUL",
        "DEFAULT/L",
        "DEFAULT/U",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
        "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
    ],
)
def test_rules_kafka_refuses_are_config_errors(rules: str) -> None:
    with pytest.raises(SslConfigError, match="Invalid rule"):
        check_principal_mapping({"ssl.principal.mapping.rules": rules})


def test_a_dn_no_rule_maps_fails_and_the_certificate_principal_uses_the_rules() -> None:
    der = der_with_subject([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    assert certificate_principal(der, "RULE:^CN=(.*)$/$1/U") == "User:ALICE"
    with pytest.raises(NoMatchingRuleError, match="No rules apply to CN=alice"):
        certificate_principal(der, "RULE:^OU=(.*)$/$1/")
