"""OS::Zaqar::Subscription, as Heat has it.

Owns: subscribing a subscriber (a webhook or mail URI) to a queue, updating subscriber,
ttl and options in place (the queue is a replacement), delete tolerating a subscription
already gone, check, ``show``. ``ZaqarSubscriptionBase`` is what OS::Zaqar::MistralTrigger
shares (``mistral_trigger.py``): how the subscription's data is made is its to change.

Zaqar keeps one subscription per project, queue and subscriber: a create cut short after
Zaqar answered (its id never recorded) is found again by its subscriber (``find_created``)
instead of being refused as a duplicate, so nothing is orphaned. A create Zaqar answers
with 503 is sent again a second later (``create_or_find``): Zaqar answers so when its
Keystone refuses the trust of a ``trust+`` subscriber, and a Keystone on MySQL refuses a
second trust of one user with the same expiry to the second as a duplicate (409), which two
subscriptions made at once (the members of an autohealing group) have.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["ZaqarSubscription", "ZaqarSubscriptionBase", "resource_mapping"]

# Heat's default ttl: the seconds until the year 9000 (never expires).
NEVER_EXPIRES_S = 220367260800


class ZaqarSubscriptionBase(Resource):
    """What a Zaqar subscription resource does, whatever its subscriber is."""

    support_status = support.SupportStatus(version="8.0.0", status=support.SUPPORTED)
    default_client_name = "zaqar"
    QUEUE_NAME, TTL = "queue_name", "ttl"

    def _subscriber_url(self) -> str:
        raise NotImplementedError

    def _subscription_options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _subscription_data(self) -> dict[str, Any]:
        return {
            "subscriber": self._subscriber_url(),
            "ttl": self.properties[self.TTL],
            "options": self._subscription_options() or {},
        }

    def handle_create(self) -> None:
        data = self._subscription_data()
        queue = self.properties[self.QUEUE_NAME]
        self.resource_id_set(
            self.client_plugin().create_or_find(
                lambda: str(self.client().create_subscription(queue, **data).id), self.find_created
            )
        )

    def find_created(self) -> str | None:
        """The subscription an interrupted create made: the queue's one with our subscriber."""
        try:
            subscriber = self._subscriber_url()
            for found in self.client_plugin().subscriptions(self.properties[self.QUEUE_NAME]):
                if found.get("subscriber") == subscriber:
                    return str(found["id"])
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
        return None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        # Heat sends the whole subscription as the new properties make it.
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        self.client_plugin().update_subscription(
            self.properties[self.QUEUE_NAME], self.resource_id, self._subscription_data()
        )

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_subscription(
                self.properties[self.QUEUE_NAME], self.resource_id, ignore_missing=True
            )
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client_plugin().get_subscription(self.properties[self.QUEUE_NAME], self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client_plugin().get_subscription(
            self.properties[self.QUEUE_NAME], self.resource_id
        )
        # Heat shows zaqarclient's object: the queue is ``queue_name`` there.
        found.setdefault(self.QUEUE_NAME, found.get("source"))
        return found


class ZaqarSubscription(ZaqarSubscriptionBase):
    """A resource for managing Zaqar subscriptions.

    A Zaqar subscription listens for messages in a queue and sends a notification over
    email or webhook.
    """

    PROPERTIES = (QUEUE_NAME, SUBSCRIBER, TTL, OPTIONS) = (
        "queue_name",
        "subscriber",
        "ttl",
        "options",
    )

    properties_schema = {
        QUEUE_NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the queue to subscribe to.",
            constraints=[constraints.CustomConstraint("zaqar.queue")],
            required=True,
        ),
        SUBSCRIBER: properties.Schema(
            properties.Schema.STRING,
            "URI of the subscriber which will be notified. Must be in the format: <TYPE>:<VALUE>.",
            required=True,
            update_allowed=True,
        ),
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            "Time to live of the subscription in seconds.",
            update_allowed=True,
            default=NEVER_EXPIRES_S,
            constraints=[constraints.Range(min=60)],
        ),
        OPTIONS: properties.Schema(
            properties.Schema.MAP,
            "Options used to configure this subscription.",
            required=False,
            update_allowed=True,
        ),
    }

    VALID_SUBSCRIBER_TYPES = ["http", "https", "mailto", "trust+http", "trust+https"]

    def validate(self) -> None:
        super().validate()
        subscriber = self.properties[self.SUBSCRIBER]
        if subscriber is None:
            return  # not known yet (a reference): checked when it is
        if str(subscriber).split(":", 1)[0] not in self.VALID_SUBSCRIBER_TYPES:
            raise ValidationError(
                "The subscriber type of must be one of: "
                + ", ".join(self.VALID_SUBSCRIBER_TYPES)
                + ".",
                path=f"resources.{self.name}.properties.subscriber",
                hint="give a URI such as http://host/path or mailto:someone@example.com",
            )

    def _subscriber_url(self) -> str:
        return str(self.properties[self.SUBSCRIBER])

    def _subscription_options(self) -> dict[str, Any]:
        return dict(self.properties[self.OPTIONS] or {})

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {
            self.QUEUE_NAME: resource_data[self.QUEUE_NAME],
            self.SUBSCRIBER: resource_data[self.SUBSCRIBER],
            self.TTL: resource_data[self.TTL],
            self.OPTIONS: resource_data[self.OPTIONS],
        }


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Zaqar::Subscription": ZaqarSubscription}
