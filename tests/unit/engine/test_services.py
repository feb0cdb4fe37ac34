"""The engine's service row as Heat's format_service answers it."""

from __future__ import annotations

from datetime import datetime, timedelta

from stoker.engine.services import formatted

NOW = datetime(2024, 5, 1, 12, 0, 0)
ROW = {
    "id": "s1",
    "engine_id": "e1",
    "host": "h",
    "hostname": "h",
    "binary": "heat-engine",
    "topic": "engine",
    "report_interval": 60,
    "created_at": NOW - timedelta(minutes=10),
    "updated_at": NOW - timedelta(seconds=120),
    "deleted_at": None,
}


def test_formatted_is_up_within_two_report_intervals() -> None:
    shown = formatted(ROW, NOW)
    assert shown["status"] == "up"
    assert shown == {
        "id": "s1",
        "binary": "heat-engine",
        "engine_id": "e1",
        "host": "h",
        "hostname": "h",
        "topic": "engine",
        "report_interval": 60,
        "created_at": "2024-05-01T11:50:00",
        "updated_at": "2024-05-01T11:58:00",
        "deleted_at": None,
        "status": "up",
    }


def test_formatted_is_down_after_two_report_intervals() -> None:
    assert formatted({**ROW, "updated_at": NOW - timedelta(seconds=121)}, NOW)["status"] == "down"


def test_formatted_without_a_report_counts_from_creation() -> None:
    assert formatted({**ROW, "updated_at": None, "created_at": NOW - timedelta(seconds=30)}, NOW)["status"] == "up"
