"""OS::Heat::RandomString."""

from __future__ import annotations

import os
import secrets
import string
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import PropertyError, ValidationError
from stoker.sdk.resource import Resource

_SEQUENCES = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "ABCDEF",
    "octdigits": string.octdigits,
}


class _Entropy:
    """Unbiased choices from the OS's cryptographic source, read in blocks: one
    ``os.urandom`` call per string instead of one per character."""

    def __init__(self) -> None:
        self._buffer = b""
        self._offset = 0

    def _byte(self) -> int:
        if self._offset >= len(self._buffer):
            self._buffer = os.urandom(256)
            self._offset = 0
        value = self._buffer[self._offset]
        self._offset += 1
        return value

    def below(self, bound: int) -> int:
        """A uniform integer in [0, bound) by rejection sampling."""
        if bound <= 256:
            limit = 256 - 256 % bound
            while True:
                value = self._byte()
                if value < limit:
                    return value % bound
        return secrets.randbelow(bound)

    def choice(self, items: Any) -> Any:
        return items[self.below(len(items))]


def _uniform(pool: str, length: int) -> str:
    """``length`` characters drawn uniformly and independently from an ASCII ``pool``
    of at most 256: random bytes are mapped to characters by ``bytes.translate``, and
    the bytes at or above the largest multiple of the pool's size are dropped, so every
    character keeps the same number of byte values (the same rejection sampling as
    ``_Entropy.below``, done in C rather than a Python call per character)."""
    table, dropped = _TABLES.get(pool) or _table(pool)
    found = b""
    while len(found) < length:
        found += os.urandom(2 * (length - len(found)) + 8).translate(table, dropped)
    return found[:length].decode("ascii")


# pool -> (byte -> character table, the bytes rejected); a few pools per process, and
# two threads making the same entry at once make the same one.
_TABLES: dict[str, tuple[bytes, bytes]] = {}


def _table(pool: str) -> tuple[bytes, bytes]:
    limit = 256 - 256 % len(pool)
    table = bytes(ord(pool[value % len(pool)]) if value < limit else 0 for value in range(256))
    entry = _TABLES[pool] = (table, bytes(range(limit, 256)))
    return entry


class RandomString(Resource):
    """A resource which generates a random string.

    This is useful for configuring passwords and secrets on services. The string is
    made with the operating system's cryptographic random source.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (LENGTH, SEQUENCE, CHARACTER_CLASSES, CHARACTER_SEQUENCES, SALT) = (
        "length",
        "sequence",
        "character_classes",
        "character_sequences",
        "salt",
    )
    CLASS, MIN, SEQUENCE_KEY = "class", "min", "sequence"

    properties_schema = {
        LENGTH: properties.Schema(
            properties.Schema.INTEGER,
            "Length of the string to generate.",
            default=32,
            constraints=[constraints.Range(1, 512)],
        ),
        SEQUENCE: properties.Schema(
            properties.Schema.STRING,
            "Sequence of characters to build the random string from.",
            constraints=[constraints.AllowedValues(list(_SEQUENCES))],
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="5.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED, message="Use property character_classes.", version="2014.2"
                ),
            ),
        ),
        CHARACTER_CLASSES: properties.Schema(
            properties.Schema.LIST,
            "A list of character class and their constraints to generate the random string from.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    CLASS: properties.Schema(
                        properties.Schema.STRING,
                        "A character class and its corresponding min constraint to generate the random string from.",
                        constraints=[constraints.AllowedValues(list(_SEQUENCES))],
                        default="lettersdigits",
                    ),
                    MIN: properties.Schema(
                        properties.Schema.INTEGER,
                        "The minimum number of characters from this character class that will be in the generated string.",
                        default=1,
                        constraints=[constraints.Range(1, 512)],
                    ),
                },
            ),
            # Heat's default, kept for templates written before character_sequences: a
            # string of only given sequences still has one letter or digit.
            default=[{CLASS: "lettersdigits", MIN: 1}],
        ),
        CHARACTER_SEQUENCES: properties.Schema(
            properties.Schema.LIST,
            "A list of character sequences and their constraints to generate the random string from.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    SEQUENCE_KEY: properties.Schema(
                        properties.Schema.STRING,
                        "A character sequence and its corresponding min constraint to generate the random string from.",
                        required=True,
                    ),
                    MIN: properties.Schema(
                        properties.Schema.INTEGER,
                        "The minimum number of characters from this sequence that will be in the generated string.",
                        default=1,
                        constraints=[constraints.Range(1, 512)],
                    ),
                },
            ),
        ),
        SALT: properties.Schema(
            properties.Schema.STRING,
            "Value which can be set or changed on stack update to trigger the resource for "
            "replacement with a new random string. The salt value itself is ignored by the random generator.",
        ),
    }

    attributes_schema = {
        "value": attributes.Schema(
            "The random string generated by this resource. This value is also available by referencing the resource.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        # As Heat: the hidden ``sequence`` becomes one more character class (with the
        # classes and sequences given beside it), so the handlers never read it.
        # The raw value is looked at first: recorded values hold "" for an unset sequence,
        # which its AllowedValues constraint rejects, and a resource rebuilt from them (to
        # delete it) must not fail here. An invalid value is left for validation to report.
        if not props.data.get(self.SEQUENCE):
            return []
        try:
            sequence = props.get(self.SEQUENCE)
        except PropertyError:
            return []
        if not sequence:
            return []
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.ADD,
                [self.CHARACTER_CLASSES],
                [{self.CLASS: sequence, self.MIN: 1}],
            ),
            translation.TranslationRule(props, translation.TranslationRule.DELETE, [self.SEQUENCE]),
        ]

    def validate(self) -> None:
        super().validate()
        classes = self.properties[self.CHARACTER_CLASSES]
        sequences = self.properties[self.CHARACTER_SEQUENCES]
        minimum = sum(entry[self.MIN] for entry in classes) + sum(entry[self.MIN] for entry in sequences)
        if minimum > self.properties[self.LENGTH]:
            raise ValidationError(
                "Length property cannot be smaller than combined character class and character sequence minimums",
                path=f"resources.{self.name}.properties.length",
            )

    def _generate(self) -> str:
        length = self.properties[self.LENGTH]
        classes = [_SEQUENCES[entry[self.CLASS]] for entry in self.properties[self.CHARACTER_CLASSES] for _ in range(entry[self.MIN])]
        sequences = [entry[self.SEQUENCE_KEY] for entry in self.properties[self.CHARACTER_SEQUENCES] for _ in range(entry[self.MIN])]
        pools_classes = [_SEQUENCES[entry[self.CLASS]] for entry in self.properties[self.CHARACTER_CLASSES]]
        pools_sequences = [entry[self.SEQUENCE_KEY] for entry in self.properties[self.CHARACTER_SEQUENCES]]
        if not pools_classes and not pools_sequences:
            pools_classes = [_SEQUENCES["lettersdigits"]]
        pools = pools_classes + pools_sequences
        if len(pools) == 1 and all(pool == pools[0] for pool in classes + sequences) and pools[0].isascii() and 0 < len(pools[0]) <= 256:
            # One pool, and any minimums drawn from it too (the default class, say): the
            # characters below come out independent and uniform over it, as these do (a
            # shuffle of such characters changes nothing).
            return _uniform(pools[0], length)
        # The minimums first, then fill from all pools, then shuffle.
        rng = _Entropy()
        chars = [rng.choice(pool) for pool in classes + sequences]
        while len(chars) < length:
            chars.append(rng.choice(rng.choice(pools)))
        for index in range(len(chars) - 1, 0, -1):  # Fisher-Yates
            other = rng.below(index + 1)
            chars[index], chars[other] = chars[other], chars[index]
        return "".join(chars)

    def handle_create(self) -> None:
        self.data_set("value", self._generate(), redact=True)
        self.resource_id_set(self.physical_resource_name())

    def _resolve_attribute(self, name: str) -> Any:
        if name == "value":
            return self.data().get("value")
        return None

    def get_reference_id(self) -> str | None:
        if self.resource_id is not None:
            return self.data().get("value")
        return self.name


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::RandomString": RandomString}
