"""Magnum (container infrastructure): the ``magnum`` client plugin, OS::Magnum::ClusterTemplate
and OS::Magnum::Cluster, and Heat's HIDDEN OS::Magnum::Bay and OS::Magnum::BayModel."""
