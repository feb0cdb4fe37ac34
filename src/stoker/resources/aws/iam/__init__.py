"""AWS::IAM::User and AWS::IAM::AccessKey: Keystone stack users and their EC2 keypairs
(Heat's ``engine/resources/aws/iam``)."""

from __future__ import annotations

from typing import Any


def resource_mapping() -> dict[str, Any]:
    from stoker.resources.aws.iam import access_key, user

    return {**user.resource_mapping(), **access_key.resource_mapping()}
