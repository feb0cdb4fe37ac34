"""The CloudFormation-compatible AWS types (Heat's ``engine/resources/aws``)."""
