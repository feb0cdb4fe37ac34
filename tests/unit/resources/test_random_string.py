"""OS::Heat::RandomString's generation: the characters it may use, and how many."""

from __future__ import annotations

import collections
import string

import pytest

from stoker.resources.heat.random_string import RandomString, _uniform
from stoker.sdk.exceptions import ValidationError
from stoker.template.definitions import ResourceDefinition


class _Stack:
    name = "random"
    id = "00000000-0000-0000-0000-000000000000"


def generate(properties: dict) -> str:
    definition = ResourceDefinition("secret", "OS::Heat::RandomString", properties).bind(
        lambda value: value
    )
    return RandomString("secret", definition, _Stack())._generate()


def test_random_string_default_is_letters_and_digits_of_its_length():
    value = generate({"length": 40})

    assert len(value) == 40
    assert set(value) <= set(string.ascii_letters + string.digits)


def test_random_string_minimums_are_kept():
    value = generate(
        {
            "length": 12,
            "character_classes": [{"class": "digits", "min": 5}, {"class": "uppercase", "min": 7}],
        }
    )

    assert sum(c.isdigit() for c in value) == 5
    assert sum(c.isupper() for c in value) == 7


def test_uniform_uses_every_character_of_the_pool_evenly():
    pool = string.ascii_letters + string.digits  # 62: 256 is no multiple of it
    drawn = collections.Counter("".join(_uniform(pool, 100) for _ in range(1240)))

    assert set(drawn) == set(pool)
    expected = 1240 * 100 / len(pool)
    # six standard deviations either way: a biased mapping (value % 62 without
    # rejection) would give the first 8 characters about 3% more
    assert all(abs(count - expected) < 6 * expected**0.5 for count in drawn.values())


def test_uniform_handles_small_and_single_character_pools():
    assert _uniform("x", 5) == "xxxxx"
    assert set(_uniform("ab", 64)) <= {"a", "b"}
    assert len(_uniform(string.octdigits, 1)) == 1


def test_random_string_of_sequences_only_still_has_a_letter_or_digit():
    """Heat's default character_classes (one letter or digit) applies when only
    character_sequences are given."""
    for _ in range(20):
        value = generate({"length": 8, "character_sequences": [{"sequence": "!", "min": 1}]})

        assert len(value) == 8
        assert "!" in value
        assert any(c.isalnum() for c in value)
        assert set(value) <= set(string.ascii_letters + string.digits + "!")


def test_random_string_too_short_for_the_default_class_and_a_sequence_is_refused():
    definition = ResourceDefinition(
        "secret", "OS::Heat::RandomString", {"length": 1, "character_sequences": [{"sequence": "!", "min": 1}]}
    ).bind(lambda value: value)
    with pytest.raises(ValidationError, match="cannot be smaller than combined character class"):
        RandomString("secret", definition, _Stack()).validate()


def test_random_string_with_no_character_classes_uses_only_its_sequences():
    value = generate({"length": 6, "character_classes": [], "character_sequences": [{"sequence": "!", "min": 1}]})

    assert value == "!!!!!!"
