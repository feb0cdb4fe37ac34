"""Trove (databases as a service): the ``trove`` client plugin, OS::Trove::Instance and
OS::Trove::Cluster."""
